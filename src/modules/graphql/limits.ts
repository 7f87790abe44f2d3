import {
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getNamedType,
  GraphQLError,
  type GraphQLField,
  type GraphQLSchema,
  isObjectType,
  isInterfaceType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  valueFromAST,
  type GraphQLNamedType,
} from 'graphql'

/**
 * What one GraphQL request may ask for. The document is public input: every limit is checked before any resolver
 * runs, from the parsed document alone (depth, aliases, operations — validation rules) or with its variables (cost).
 */
export const LIMITS = {
  /** Bytes of the query text. */
  maxQueryBytes: 100 * 1024,
  /** Nesting of fields (the operation's top-level fields are depth 1). */
  maxDepth: 10,
  /** Below an introspection field (`__schema`, `__type`), which nests deeper by nature (`ofType` chains). */
  maxIntrospectionDepth: 20,
  maxAliases: 20,
  maxOperations: 1,
  /** See `operationCost`. A full page of 100 Stories with every field costs about 1,500. */
  maxCost: 5000,
  /** Lexical tokens of the document (graphql-js stops parsing past it). */
  maxTokens: 2000,
  /** Selections once fragment spreads are expanded (see `expandedSelections`). */
  maxSelections: 10_000,
  /** Parsed documents kept per query text (see `TextLru` in routes.ts), and the longest text kept. */
  documentCacheEntries: 256,
  documentCacheMaxBytes: 8 * 1024,
} as const

const isIntrospection = (name: string) => name.startsWith('__')

/** A request carries exactly one operation (a document of fragments only is refused by graphql-js itself). */
export function singleOperationRule(context: ValidationContext): ASTVisitor {
  return {
    Document(node) {
      const ops = node.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length
      if (ops > LIMITS.maxOperations) {
        context.reportError(new GraphQLError(`A request may carry ${LIMITS.maxOperations} operation; this one has ${ops}.`, { extensions: { code: 'too_many_operations' } }))
      }
    },
  }
}

/** Read-only: a mutation or subscription is an error, whatever the schema says. */
export function readOnlyRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(node) {
      if (node.operation !== 'query') {
        context.reportError(
          new GraphQLError(`This endpoint is read-only: ${node.operation} operations are not supported.`, {
            nodes: [node],
            extensions: { code: 'read_only' },
          }),
        )
      }
    },
  }
}

/** At most LIMITS.maxAliases aliases in the whole document (fragments included). */
export function maxAliasesRule(context: ValidationContext): ASTVisitor {
  let aliases = 0
  return {
    Field(node) {
      if (node.alias) aliases++
    },
    Document: {
      leave() {
        if (aliases > LIMITS.maxAliases) {
          context.reportError(new GraphQLError(`A request may use at most ${LIMITS.maxAliases} aliases; this one uses ${aliases}.`, { extensions: { code: 'too_many_aliases' } }))
        }
      },
    },
  }
}

/**
 * How deep a selection set nests fields, fragments expanded: `plain` counts paths without an introspection field,
 * `all` every path. A fragment's depth is computed once per document (memoised, bottom-up), so a document whose
 * fragments spread each other many times costs one pass over its text, never the expanded tree; a spread of a fragment
 * that is being computed (a cycle, refused by graphql-js's own NoFragmentCycles) counts 0 and never loops.
 */
interface Depth {
  plain: number
  all: number
}

function depthWalker(doc: DocumentNode) {
  const fragments = fragmentsOf(doc)
  const memo = new Map<string, Depth | 'pending'>()
  const depthOf = (set: SelectionSetNode): Depth => {
    let plain = 0
    let all = 0
    for (const sel of set.selections) {
      let d: Depth
      if (sel.kind === Kind.FIELD) {
        const child = sel.selectionSet ? depthOf(sel.selectionSet) : { plain: 0, all: 0 }
        // Below an introspection field every path is an introspection path: it counts for `all` only.
        d = { plain: isIntrospection(sel.name.value) ? 0 : 1 + child.plain, all: 1 + child.all }
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        d = depthOf(sel.selectionSet)
      } else {
        d = fragmentDepth(sel.name.value)
      }
      if (d.plain > plain) plain = d.plain
      if (d.all > all) all = d.all
    }
    return { plain, all }
  }
  const fragmentDepth = (name: string): Depth => {
    const known = memo.get(name)
    if (known === 'pending') return { plain: 0, all: 0 }
    if (known) return known
    const f = fragments.get(name)
    if (!f) return { plain: 0, all: 0 }
    memo.set(name, 'pending')
    const d = depthOf(f.selectionSet)
    memo.set(name, d)
    return d
  }
  return depthOf
}

/** Field nesting of each operation, fragments expanded (each fragment measured once; see `depthWalker`). */
export function maxDepthRule(context: ValidationContext): ASTVisitor {
  let depthOf: ((set: SelectionSetNode) => Depth) | undefined
  return {
    OperationDefinition(op) {
      depthOf ??= depthWalker(context.getDocument())
      const d = depthOf(op.selectionSet)
      const report = (depth: number, limit: number) =>
        context.reportError(
          new GraphQLError(`The query nests fields ${depth} levels deep; at most ${limit} are allowed.`, { nodes: [op], extensions: { code: 'too_deep' } }),
        )
      if (d.plain > LIMITS.maxDepth) report(d.plain, LIMITS.maxDepth)
      else if (d.all > LIMITS.maxIntrospectionDepth) report(d.all, LIMITS.maxIntrospectionDepth)
    },
  }
}

/**
 * How many selections the document holds once its fragment spreads are expanded (every field, inline fragment and
 * spread counts 1), saturating just past `LIMITS.maxSelections`. Each fragment is counted once (memoised) and a
 * cycle counts 0, so this is one pass over the text whatever the spreads multiply to. Checked at parse, before
 * graphql-js's own validation, which would otherwise walk what the spreads multiply to.
 */
export function expandedSelections(doc: DocumentNode): number {
  const cap = LIMITS.maxSelections + 1
  const fragments = fragmentsOf(doc)
  const memo = new Map<string, number | 'pending'>()
  const sizeOf = (set: SelectionSetNode): number => {
    let n = 0
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) n += 1 + (sel.selectionSet ? sizeOf(sel.selectionSet) : 0)
      else if (sel.kind === Kind.INLINE_FRAGMENT) n += 1 + sizeOf(sel.selectionSet)
      else n += 1 + fragmentSize(sel.name.value)
      if (n >= cap) return cap
    }
    return n
  }
  const fragmentSize = (name: string): number => {
    const known = memo.get(name)
    if (known === 'pending') return 0
    if (known !== undefined) return known
    const f = fragments.get(name)
    if (!f) return 0
    memo.set(name, 'pending')
    const n = sizeOf(f.selectionSet)
    memo.set(name, n)
    return n
  }
  let total = 0
  for (const d of doc.definitions) if (d.kind === Kind.OPERATION_DEFINITION) total = Math.min(cap, total + sizeOf(d.selectionSet))
  // A fragment no operation reaches is still walked by graphql-js's validation: it counts as a root too.
  for (const name of fragments.keys()) if (!memo.has(name)) total = Math.min(cap, total + fragmentSize(name))
  return total
}

export const VALIDATION_RULES = [singleOperationRule, readOnlyRule, maxAliasesRule, maxDepthRule]

function fragmentsOf(doc: DocumentNode): Map<string, FragmentDefinitionNode> {
  const map = new Map<string, FragmentDefinitionNode>()
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) map.set(d.name.value, d)
  return map
}

/**
 * The cost of an operation: every field costs 1, plus its selection's cost — times the number of items it may return
 * when it takes a `perPage` argument (the literal, the variable's value, else the argument's declared default).
 * Introspection costs 1 per field. Fragments on several types count the most expensive type once per field (an
 * upper bound that never under-counts a list).
 */
export function operationCost(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> | null | undefined): number {
  const fragments = fragmentsOf(document)
  const ops = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
  const op = operationName ? ops.find((o) => o.name?.value === operationName) : ops[0]
  if (!op) return 0
  const root = schema.getQueryType()
  if (!root) return 0
  const vars = variables ?? {}

  const perPageOf = (field: FieldNode, def: GraphQLField<unknown, unknown> | undefined): number => {
    const arg = def?.args.find((a) => a.name === 'perPage')
    if (!arg) return 1
    const node = field.arguments?.find((a) => a.name.value === 'perPage')
    let value: unknown = node ? valueFromAST(node.value, arg.type, vars as Record<string, unknown>) : undefined
    // Absent or null: the resolver uses the default.
    if (value === undefined || value === null) value = arg.defaultValue
    const n = typeof value === 'number' && Number.isFinite(value) ? value : 1
    return Math.max(1, Math.min(n, 1000))
  }

  // A fragment's cost depends on its own type condition and the variables only: computed once per call (memoised),
  // so spreads that multiply each other cost one pass over the document. A cycle (invalid, refused by validation)
  // counts 0. Sums saturate at MAX_SAFE_INTEGER so the answer stays a JSON number.
  const memo = new Map<string, number | 'pending'>()
  const add = (a: number, b: number) => Math.min(Number.MAX_SAFE_INTEGER, a + b)
  const costOf = (set: SelectionSetNode, type: GraphQLNamedType | undefined): number => {
    let total = 0
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const name = sel.name.value
        if (isIntrospection(name)) {
          total = add(total, 1)
          continue
        }
        const def = type && (isObjectType(type) || isInterfaceType(type)) ? type.getFields()[name] : undefined
        const child = sel.selectionSet ? costOf(sel.selectionSet, def ? getNamedType(def.type) : undefined) : 0
        total = add(total, 1 + Math.min(Number.MAX_SAFE_INTEGER, child * perPageOf(sel, def)))
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const t = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : type
        total = add(total, costOf(sel.selectionSet, t ?? undefined))
      } else {
        total = add(total, fragmentCost(sel.name.value))
      }
    }
    return total
  }
  const fragmentCost = (name: string): number => {
    const known = memo.get(name)
    if (known === 'pending') return 0
    if (known !== undefined) return known
    const f = fragments.get(name)
    if (!f) return 0
    memo.set(name, 'pending')
    const c = costOf(f.selectionSet, schema.getType(f.typeCondition.name.value) ?? undefined)
    memo.set(name, c)
    return c
  }
  return costOf(op.selectionSet, root)
}
