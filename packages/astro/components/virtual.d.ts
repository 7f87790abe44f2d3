// The component map the integration registers (blueprint name → Astro component).
declare module 'virtual:content-service/components' {
  export const components: Record<string, unknown>
}
