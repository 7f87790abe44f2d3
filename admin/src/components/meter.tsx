/** A bar of `value` against `max` (a usage against its limit); red from 90 %. */
export function Meter({ label, value, max }: { label: string; value: number; max: number }) {
  const share = max > 0 ? Math.min(1, value / max) : 1
  return (
    <div className="mt-2 h-2 w-full max-w-md overflow-hidden rounded bg-slate-200" role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={max} aria-valuenow={Math.min(value, max)}>
      <div className={`h-full ${share >= 0.9 ? 'bg-red-700' : 'bg-indigo-700'}`} style={{ width: `${share * 100}%` }} />
    </div>
  )
}
