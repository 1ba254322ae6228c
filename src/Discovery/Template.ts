/** What a template can name: text, flags, lists of items and items with fields. */
export type TemplateValue =
  | string
  | number
  | boolean
  | ReadonlyArray<TemplateValue>
  | { readonly [key: string]: TemplateValue }

type Scope = Readonly<Record<string, TemplateValue>>

const isScope = (value: TemplateValue): value is Scope => typeof value === "object" && !Array.isArray(value)

const SECTION = /\{\{#(\w+)\}\}\n?([\s\S]*?)\{\{\/\1\}\}\n?/g
const FIELD = /\{\{([\w.]+)\}\}/g
const WHOLE = /^\{\{(\w+)\}\}$/

const lookup = (scope: Scope, name: string, template: string): TemplateValue => {
  const value = scope[name]
  if (value === undefined) throw new Error(`${template}: unknown placeholder {{${name}}}`)
  return value
}

const scalar = (scope: Scope, name: string, template: string): string => {
  const value = lookup(scope, name, template)
  if (typeof value === "object") throw new Error(`${template}: {{${name}}} is a list; use {{#${name}}}...{{/${name}}}`)
  return String(value)
}

/**
 * A logic-less subset of Mustache: `{{name}}` inserts text, `{{#list}}...{{/list}}` repeats its inside for each
 * item (whose fields become names, or `{{.}}` for plain items). Unknown names fail, so a typo stops the desk.
 */
export const renderText = (source: string, values: Scope, template: string): string =>
  source
    .replace(SECTION, (_, name: string, inside: string) => {
      const list = lookup(values, name, template)
      if (!Array.isArray(list)) throw new Error(`${template}: {{#${name}}} needs a list`)
      return list.map((item: TemplateValue) => {
        const scope = isScope(item) ? { ...values, ...item } : { ...values, ".": item }
        return inside.replace(FIELD, (_match, field: string) => scalar(scope, field, template))
      }).join("")
    })
    .replace(FIELD, (_, name: string) => scalar(values, name, template))

const renderValue = (value: unknown, values: Scope, template: string): unknown => {
  if (typeof value === "string") {
    const whole = WHOLE.exec(value)
    return whole ? lookup(values, whole[1]!, template) : renderText(value, values, template)
  }
  if (Array.isArray(value)) return value.map((item) => renderValue(item, values, template))
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderValue(item, values, template)]))
  }
  return value
}

/** A JSON template: a string that is exactly `{{name}}` becomes that value (list, flag...), others are text. */
export const renderJson = (source: string, values: Scope, template: string): Record<string, unknown> =>
  renderValue(JSON.parse(source), values, template) as Record<string, unknown>
