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

/** Field nesting of each operation, fragments expanded (a fragment cycle, reported by graphql-js, stops the walk). */
export function maxDepthRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(op) {
      const fragments = fragmentsOf(context.getDocument())
      const walk = (set: SelectionSetNode, depth: number, introspection: boolean, seen: Set<string>): boolean => {
        for (const sel of set.selections) {
          if (sel.kind === Kind.FIELD) {
            const intro = introspection || isIntrospection(sel.name.value)
            const d = depth + 1
            const limit = intro ? LIMITS.maxIntrospectionDepth : LIMITS.maxDepth
            if (d > limit) {
              context.reportError(
                new GraphQLError(`The query nests fields ${d} levels deep; at most ${limit} are allowed.`, { nodes: [sel], extensions: { code: 'too_deep' } }),
              )
              return false
            }
            if (sel.selectionSet && !walk(sel.selectionSet, d, intro, seen)) return false
          } else if (sel.kind === Kind.INLINE_FRAGMENT) {
            if (!walk(sel.selectionSet, depth, introspection, seen)) return false
          } else {
            const name = sel.name.value
            const f = fragments.get(name)
            if (!f || seen.has(name)) continue
            seen.add(name)
            const ok = walk(f.selectionSet, depth, introspection, seen)
            seen.delete(name)
            if (!ok) return false
          }
        }
        return true
      }
      walk(op.selectionSet, 0, false, new Set())
    },
  }
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

  const costOf = (set: SelectionSetNode, type: GraphQLNamedType | undefined, seen: Set<string>): number => {
    let total = 0
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const name = sel.name.value
        if (isIntrospection(name)) {
          total += 1
          continue
        }
        const def = type && (isObjectType(type) || isInterfaceType(type)) ? type.getFields()[name] : undefined
        const child = sel.selectionSet ? costOf(sel.selectionSet, def ? getNamedType(def.type) : undefined, seen) : 0
        total += 1 + child * perPageOf(sel, def)
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const t = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : type
        total += costOf(sel.selectionSet, t ?? undefined, seen)
      } else {
        const f = fragments.get(sel.name.value)
        if (!f || seen.has(f.name.value)) continue
        seen.add(f.name.value)
        total += costOf(f.selectionSet, schema.getType(f.typeCondition.name.value) ?? undefined, seen)
        seen.delete(f.name.value)
      }
    }
    return total
  }
  return costOf(op.selectionSet, root, new Set())
}
