/**
 * The `read` scope inside mutation results. A mutation needs `write` (or `approve`), but its
 * result can reach stored data (`remember { … on RememberSuccess { thread { nodes … } } }`), so
 * scopes must cover every field a response contains, not only the root field.
 *
 * The rule: without `read`, a mutation's response may contain only its receipt —
 * - `__typename`;
 * - the scalar and enum fields (JSON excepted: JSON is stored content) of the result types: the
 *   members of each Mutation field's result union (the `…Success` payloads), the `Error`
 *   interface and its implementations, and the types used only inside errors (`Issue`);
 * - the `id` of each object a result names (`thread { id }`, `run { id }`, `nodes { id }`), so
 *   a client learns the ids the write generated.
 * Every other field (`Thread.nodes`, `Run.memory`, `CausalNode.payload`, `MemoryItem.content`, …)
 * needs `read`.
 *
 * The result types are derived from the built schema (and none is a type a query returns), so a
 * new data type or field needs `read` without anyone marking it.
 * The whole operation is checked before its first mutation runs, so a refused operation writes
 * nothing and answers FORBIDDEN naming the first field that needs `read`, with no data.
 */
import SchemaBuilder, { BasePlugin, type SchemaTypes } from '@pothos/core';
import {
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  GraphQLError,
  type GraphQLError as GraphQLErrorType,
  type GraphQLField,
  GraphQLIncludeDirective,
  type GraphQLNamedType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getDirectiveValues,
  getNamedType,
  isInterfaceType,
  isLeafType,
  isObjectType,
  isUnionType,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { type GraphQLContext, grants } from './context.js';

/** The types whose scalar fields a mutation may return without `read`. */
export function receiptTypes(schema: GraphQLSchema): ReadonlySet<string> {
  const mutation = schema.getMutationType();
  // Types some field other than a mutation returns hold stored data (Thread, Run, …).
  const data = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!(isObjectType(type) || isInterfaceType(type)) || type === mutation) continue;
    for (const field of Object.values(type.getFields())) data.add(getNamedType(field.type).name);
  }
  const receipts = new Set<string>();
  for (const field of Object.values(mutation?.getFields() ?? {})) {
    const result = getNamedType(field.type);
    const members = isUnionType(result) ? result.getTypes() : isObjectType(result) ? [result] : [];
    for (const member of members) if (!data.has(member.name)) receipts.add(member.name);
  }
  const error = schema.getType('Error');
  const errors = new Set<string>();
  if (error !== undefined && isInterfaceType(error)) {
    errors.add(error.name);
    for (const type of schema.getPossibleTypes(error)) errors.add(type.name);
  }
  // Types used only inside errors (an error's details, e.g. ValidationError.issues: [Issue]).
  const users = new Map<string, Set<string>>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!(isObjectType(type) || isInterfaceType(type)) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const used = getNamedType(field.type).name;
      users.set(used, (users.get(used) ?? new Set()).add(type.name));
    }
  }
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, by] of users) {
      if (errors.has(name) || !isObjectType(schema.getType(name))) continue;
      if ([...by].every((user) => errors.has(user))) {
        errors.add(name);
        grew = true;
      }
    }
  }
  for (const name of errors) receipts.add(name);
  return receipts;
}

/**
 * Whether a key without `read` may select `field` of `parent`: on a result type, its scalar and
 * enum fields (not JSON) and the objects it names; on any other type, only its `id`.
 */
function isReceipt(
  receipts: ReadonlySet<string>,
  parent: GraphQLNamedType,
  field: GraphQLField<unknown, unknown>,
): boolean {
  const type = getNamedType(field.type);
  if (!receipts.has(parent.name)) return field.name === 'id' && isLeafType(type);
  return !isLeafType(type) || type.name !== 'JSON';
}

export interface Denied {
  /** The schema coordinate of the field, e.g. RememberSuccess.thread. */
  field: string;
  /** Its response path, e.g. remember.thread. */
  path: string;
}

/** The first field of a mutation operation that needs `read`, if any. */
export function firstFieldNeedingRead(
  info: Pick<GraphQLResolveInfo, 'schema' | 'operation' | 'fragments' | 'variableValues'>,
  receipts: ReadonlySet<string>,
): Denied | undefined {
  const { schema, fragments, variableValues } = info;
  const included = (node: SelectionNode) =>
    getDirectiveValues(GraphQLSkipDirective, node, variableValues)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variableValues)?.if !== false;
  const seen = new Set<FragmentDefinitionNode>();
  const walk = (
    set: SelectionSetNode,
    parent: GraphQLCompositeType,
    path: readonly string[],
    root: boolean,
  ): Denied | undefined => {
    for (const selection of set.selections) {
      if (!included(selection)) continue;
      if (selection.kind === 'Field') {
        const name = selection.name.value;
        if (name.startsWith('__')) continue;
        const field = isUnionType(parent) ? undefined : parent.getFields()[name];
        if (field === undefined) continue;
        const at = [...path, selection.alias?.value ?? name];
        // The mutation fields themselves carry their own scope (write, or approve).
        if (!root && !isReceipt(receipts, parent, field)) {
          return { field: `${parent.name}.${name}`, path: at.join('.') };
        }
        const type = getNamedType(field.type);
        if (selection.selectionSet !== undefined && !isLeafType(type)) {
          const denied = walk(selection.selectionSet, type, at, false);
          if (denied !== undefined) return denied;
        }
        continue;
      }
      const fragment =
        selection.kind === 'FragmentSpread' ? fragments[selection.name.value] : selection;
      if (fragment === undefined) continue;
      if (fragment.kind === 'FragmentDefinition') {
        if (seen.has(fragment)) continue;
        seen.add(fragment);
      }
      const condition = fragment.typeCondition?.name.value;
      const type = condition === undefined ? parent : schema.getType(condition);
      if (type === undefined || !(isObjectType(type) || isInterfaceType(type) || isUnionType(type)))
        continue;
      const denied = walk(fragment.selectionSet, type, path, root);
      if (denied !== undefined) return denied;
    }
    return undefined;
  };
  const mutation = schema.getMutationType();
  if (info.operation.operation !== 'mutation' || mutation == null) return undefined;
  return walk(info.operation.selectionSet, mutation, [], true);
}

export function readScopeError(denied: Denied, ctx: GraphQLContext): GraphQLErrorType {
  return new GraphQLError(
    `this API key may not read ${denied.field} (at ${denied.path}): reading stored data needs the read scope (${[...ctx.auth.scopes].join(', ') || 'none'} granted); without read, select only ids, logIndex, error fields and __typename`,
    { extensions: { code: 'FORBIDDEN', field: denied.field, fieldPath: denied.path } },
  );
}

/**
 * A Pothos plugin: every Mutation field first checks the whole operation's selection against
 * the caller's scopes (scope-auth, outside it, has already checked write or approve).
 */
export class FieldScopesPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  private receipts: ReadonlySet<string> = new Set();

  override afterBuild(schema: GraphQLSchema): GraphQLSchema {
    this.receipts = receiptTypes(schema);
    return schema;
  }

  override wrapResolve(
    resolver: Parameters<BasePlugin<Types>['wrapResolve']>[0],
    fieldConfig: Parameters<BasePlugin<Types>['wrapResolve']>[1],
  ): ReturnType<BasePlugin<Types>['wrapResolve']> {
    if (fieldConfig.kind !== 'Mutation') return resolver;
    return (parent, args, context, info) => {
      const ctx = context as unknown as GraphQLContext;
      if (!grants(ctx, 'read')) {
        const denied = firstFieldNeedingRead(info, this.receipts);
        if (denied !== undefined) throw readScopeError(denied, ctx);
      }
      return resolver(parent, args, context, info);
    };
  }
}

const pluginName = 'weftFieldScopes';

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      weftFieldScopes: FieldScopesPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin(pluginName, FieldScopesPlugin);

export default pluginName;
