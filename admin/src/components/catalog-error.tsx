import { errorText } from '../i18n'

/** A failure as a sentence in the UI's language (the API's error code through the catalog, else its message). */
export function CatalogError({ error }: { error: unknown }) {
  if (!error) return null
  return (
    <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 ring-1 ring-red-200">
      {errorText(error)}
    </p>
  )
}
