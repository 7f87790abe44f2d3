import { BlockList } from '../components/block-editor'
import type { Block, FieldProps } from './types'

/** Nested blocks: add, remove, reorder (buttons, or Alt+↑/↓ on a block's handle). */
export function BlocksField({ id, path, def, value, onChange, blueprints, errors }: FieldProps<Block[]>) {
  const allowed = [...blueprints.values()].filter((b) => b.is_nestable && (!def.component_whitelist || def.component_whitelist.includes(b.name)))
  return (
    <div id={id} tabIndex={-1}>
      <BlockList path={path} blocks={value ?? []} onChange={(blocks) => onChange(blocks.length ? blocks : undefined)} allowed={allowed} blueprints={blueprints} errors={errors} />
    </div>
  )
}
