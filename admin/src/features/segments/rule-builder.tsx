import { useQuery } from '@tanstack/react-query'
import { useId } from 'react'
import { api, unwrap } from '../../api/client'
import { queryKeys } from '../../api/keys'
import { Button, FieldErrors } from '../../components/ui'
import { t } from './messages'
import { useDebounced } from '../../components/form-hooks'
import type { Rule } from './queries'

/** The API's rule types and operators (src/modules/segments/model.ts). */
export const RULE_TYPES = ['country', 'language', 'referrer', 'cookie', 'query', 'utm_source', 'utm_campaign'] as const
export const RULE_OPERATORS = ['eq', 'neq', 'in', 'not_in', 'contains', 'starts_with', 'regex'] as const
export const MAX_RULES = 20
const LIST = new Set(['in', 'not_in'])
const KEYED = new Set(['cookie', 'query'])
const INPUT = 'rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm aria-invalid:border-red-600'

export type ApiRule = { type: (typeof RULE_TYPES)[number]; operator: (typeof RULE_OPERATORS)[number]; value: string | string[]; key?: string }

/** A rule as the API takes it: a list for in / not_in, a key only for cookie and query rules. */
export function normalise(r: Rule): ApiRule {
  const list = LIST.has(r.operator)
  const value = list
    ? (Array.isArray(r.value) ? r.value : r.value.split(/[\n,]/)).map((v) => v.trim()).filter(Boolean)
    : Array.isArray(r.value)
      ? r.value.join(', ')
      : r.value
  return { type: r.type, operator: r.operator, value, ...(KEYED.has(r.type) && r.key ? { key: r.key } : {}) } as ApiRule
}

/** A rule's refusal (the API writes English) as a sentence in the UI's language; the RE2 parser's reason stays as it is. */
export function ruleErrorText(message: string): string {
  let m: RegExpExecArray | null
  if ((m = /^is not a valid RE2 regular expression: (.*)$/s.exec(message))) return t('seg.err.regex', { reason: m[1]! })
  if ((m = /^is too complex: it compiles to (\d+) instructions, at most (\d+)/.exec(message))) return t('seg.err.complex', { size: m[1]!, max: m[2]! })
  if ((m = /^must be at most (\d+) characters/.exec(message))) return t('seg.err.length', { max: m[1]! })
  if ((m = /^must be an array of 1 to (\d+) strings/.exec(message))) return t('seg.err.list', { max: m[1]! })
  if (/^must be a string for/.test(message)) return t('seg.err.string')
  if (/^is required for (cookie|query) rules/.test(message)) return t('seg.err.keyRequired')
  if (/^is only for cookie and query rules/.test(message)) return t('seg.err.keyOnly')
  return message
}

/**
 * The rules of a segment, every type and operator the API has; the API's own checks (value shape, the cookie/query
 * name, RE2 regexes compiled as the server will) run as you type through `POST …/check-rules`, shown at the field.
 */
export function RuleBuilder({ space, rules, onChange, errors }: { space: string; rules: Rule[]; onChange: (rules: Rule[]) => void; errors: Record<string, string[]> }) {
  const checked = useDebounced(JSON.stringify(rules.map(normalise)), 250)
  const check = useQuery({
    queryKey: queryKeys.segmentRulesCheck(space, checked),
    queryFn: async () => (await unwrap(api.POST('/v1/spaces/{space}/audience-segments/check-rules', { params: { path: { space } }, body: { rules: JSON.parse(checked) } }))).data,
    enabled: rules.length > 0,
    retry: false,
    staleTime: Infinity,
  })
  const live = check.data?.errors ?? {}
  const at = (i: number, f: string) => {
    const k = `rules/${i}/${f}`
    const l = live[k] ?? errors[k]
    return l?.length ? l.map(ruleErrorText) : undefined
  }
  const set = (i: number, patch: Partial<Rule>) => onChange(rules.map((r, j) => (j === i ? { ...r, ...patch } : r)))
  return (
    <ol className="flex flex-col gap-3" data-testid="rules">
      {rules.map((r, i) => (
        <RuleRow key={i} index={i} rule={r} set={(p) => set(i, p)} remove={() => onChange(rules.filter((_, j) => j !== i))} errorsAt={(f) => at(i, f)} />
      ))}
      {rules.length < MAX_RULES ? (
        <li className="list-none">
          <Button onClick={() => onChange([...rules, { type: 'language', operator: 'eq', value: '' }])}>{t('seg.addRule')}</Button>
        </li>
      ) : null}
    </ol>
  )
}

function RuleRow({ index, rule, set, remove, errorsAt }: { index: number; rule: Rule; set: (p: Partial<Rule>) => void; remove: () => void; errorsAt: (f: string) => string[] | undefined }) {
  const id = useId()
  const n = index + 1
  const list = LIST.has(rule.operator)
  const valueErr = errorsAt('value')
  const keyErr = errorsAt('key')
  const shown = Array.isArray(rule.value) ? rule.value.join(', ') : rule.value
  return (
    <li className="flex flex-col gap-2 rounded-md bg-slate-50 p-3 ring-1 ring-slate-200" data-rule={index}>
      <div className="flex flex-wrap items-end gap-2">
        <label className="flex flex-col gap-1 text-xs font-medium">
          {t('seg.ruleType', { n })}
          <select className={INPUT} value={rule.type} onChange={(e) => set({ type: e.target.value, ...(KEYED.has(e.target.value) ? {} : { key: undefined }) })}>
            {RULE_TYPES.map((ty) => (
              <option key={ty} value={ty}>
                {t(`seg.type.${ty}`)}
              </option>
            ))}
          </select>
        </label>
        {KEYED.has(rule.type) ? (
          <div className="flex flex-col gap-1">
            <label htmlFor={`${id}-key`} className="text-xs font-medium">
              {rule.type === 'cookie' ? t('seg.cookieName', { n }) : t('seg.queryName', { n })}
            </label>
            <input id={`${id}-key`} className={INPUT} value={rule.key ?? ''} onChange={(e) => set({ key: e.target.value })} aria-invalid={keyErr ? true : undefined} aria-describedby={keyErr ? `${id}-kerr` : undefined} />
          </div>
        ) : null}
        <label className="flex flex-col gap-1 text-xs font-medium">
          {t('seg.operator', { n })}
          <select className={INPUT} value={rule.operator} onChange={(e) => set({ operator: e.target.value })}>
            {RULE_OPERATORS.map((op) => (
              <option key={op} value={op}>
                {t(`seg.op.${op}`)}
              </option>
            ))}
          </select>
        </label>
        <div className="flex min-w-48 flex-1 flex-col gap-1">
          <label htmlFor={`${id}-value`} className="text-xs font-medium">
            {list ? t('seg.values', { n }) : rule.operator === 'regex' ? t('seg.pattern', { n }) : t('seg.value', { n })}
          </label>
          <input
            id={`${id}-value`}
            className={`${INPUT} ${rule.operator === 'regex' ? 'font-mono' : ''}`}
            value={shown}
            spellCheck={false}
            onChange={(e) => set({ value: e.target.value })}
            aria-invalid={valueErr ? true : undefined}
            aria-describedby={valueErr ? `${id}-verr` : list ? `${id}-hint` : undefined}
          />
          {list && !valueErr ? (
            <p id={`${id}-hint`} className="text-xs text-slate-600">
              {t('seg.valuesHint')}
            </p>
          ) : null}
        </div>
        <Button onClick={remove} aria-label={t('seg.removeRule', { n })}>
          {t('seg.remove')}
        </Button>
      </div>
      <FieldErrors id={`${id}-kerr`} errors={keyErr} />
      <FieldErrors id={`${id}-verr`} errors={valueErr} />
    </li>
  )
}
