/**
 * A small reader of the HTML forms on the simulator's hosted and access-control pages, so the demo
 * can complete them "browser-less" over plain HTTP, as a customer's browser would.
 */

/** One `<form>`: where it goes and the fields it would submit. */
export interface HtmlForm {
  readonly action: string
  readonly method: string
  /** Hidden and pre-filled inputs, plus any `<input>`/`<select>`/`<textarea>` with a name. */
  readonly fields: ReadonlyArray<readonly [string, string]>
  /** Submit buttons: name, value and visible label. */
  readonly buttons: ReadonlyArray<{ readonly name: string; readonly value: string; readonly label: string }>
}

const attr = (tag: string, name: string): string | undefined => {
  const m = new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(tag)
  if (!m) return undefined
  return decodeEntities(m[2] ?? m[3] ?? m[4] ?? "")
}

const decodeEntities = (s: string): string =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#([0-9]+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&amp;/g, "&")

/** Every form of a page, with relative actions resolved against `pageUrl`. */
export const parseForms = (html: string, pageUrl: string): Array<HtmlForm> => {
  const forms: Array<HtmlForm> = []
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const open = `<form${m[1] ?? ""}>`
    const body = m[2] ?? ""
    const fields: Array<readonly [string, string]> = []
    const buttons: Array<{ name: string; value: string; label: string }> = []
    for (const t of body.matchAll(/<input\b[^>]*>/gi)) {
      const tag = t[0]
      const name = attr(tag, "name")
      const type = (attr(tag, "type") ?? "text").toLowerCase()
      if (type === "submit") {
        buttons.push({ name: name ?? "", value: attr(tag, "value") ?? "", label: attr(tag, "value") ?? "" })
      } else if (name) {
        fields.push([name, attr(tag, "value") ?? ""])
      }
    }
    for (const t of body.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/gi)) {
      const tag = `<button${t[1] ?? ""}>`
      const type = (attr(tag, "type") ?? "submit").toLowerCase()
      if (type !== "submit") continue
      const label = decodeEntities((t[2] ?? "").replace(/<[^>]+>/g, "").trim())
      buttons.push({ name: attr(tag, "name") ?? "", value: attr(tag, "value") ?? "", label })
    }
    for (const t of body.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/gi)) {
      const name = attr(`<select${t[1] ?? ""}>`, "name")
      if (!name) continue
      const options = [...(t[2] ?? "").matchAll(/<option\b([^>]*)>([\s\S]*?)<\/option>/gi)]
      const chosen = options.find((o) => /\sselected\b/i.test(o[1] ?? "")) ?? options[0]
      fields.push([name, chosen ? (attr(`<option${chosen[1] ?? ""}>`, "value") ?? (chosen[2] ?? "").trim()) : ""])
    }
    for (const t of body.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/gi)) {
      const name = attr(`<textarea${t[1] ?? ""}>`, "name")
      if (name) fields.push([name, decodeEntities(t[2] ?? "")])
    }
    forms.push({
      action: new URL(attr(open, "action") ?? pageUrl, pageUrl).toString(),
      method: (attr(open, "method") ?? "GET").toUpperCase(),
      fields,
      buttons
    })
  }
  return forms
}

/**
 * Fills a form: `values` override or add fields; `button` picks the submit button whose name,
 * value or label matches (case-insensitive). Returns the encoded body to send.
 */
export const fillForm = (
  form: HtmlForm,
  values: Readonly<Record<string, string>>,
  button?: RegExp
): URLSearchParams => {
  const body = new URLSearchParams()
  const seen = new Set<string>()
  for (const [name, value] of form.fields) {
    if (name in values) {
      if (!seen.has(name)) body.append(name, values[name]!)
      seen.add(name)
    } else {
      body.append(name, value)
    }
  }
  for (const [name, value] of Object.entries(values)) if (!seen.has(name) && !form.fields.some(([n]) => n === name)) body.append(name, value)
  if (button) {
    const b = form.buttons.find((x) => button.test(x.label) || button.test(x.value) || button.test(x.name))
    if (!b) throw new Error(`no submit button matching ${button} on the form to ${form.action}`)
    if (b.name) body.append(b.name, b.value)
  }
  return body
}
