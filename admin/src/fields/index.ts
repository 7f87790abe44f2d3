import { AssetField } from './asset'
import { BlocksField } from './blocks'
import { BooleanField } from './boolean'
import { DatetimeField } from './datetime'
import { JsonField } from './json'
import { LinkField } from './link'
import { MarkdownField } from './markdown'
import { MultiselectField } from './multiselect'
import { NumberField } from './number'
import { RichtextField } from './richtext'
import { SelectField } from './select'
import { TagsField } from './tags'
import { TextField } from './text'
import { TextareaField } from './textarea'
import type { FieldEditor } from './types'

/**
 * The editor of each blueprint field type. A type missing here is edited as JSON (fields/json.tsx) until it gets its
 * own component: add `admin/src/fields/<type>.tsx` and one line here.
 */
export const FIELD_EDITORS: Record<string, FieldEditor> = {
  text: TextField,
  textarea: TextareaField,
  markdown: MarkdownField,
  number: NumberField,
  boolean: BooleanField,
  select: SelectField,
  multiselect: MultiselectField,
  tags: TagsField,
  link: LinkField,
  datetime: DatetimeField,
  blocks: BlocksField,
  richtext: RichtextField,
  asset: AssetField,
}

export const editorFor = (type: string): FieldEditor => FIELD_EDITORS[type] ?? (JsonField)
