/**
 * The customer's browser, without a browser: it opens the page the gateway redirects to, fills
 * the hosted form or presses a button on the 3-D Secure page, and follows redirects and the
 * auto-submitting final redirect back to the merchant — over plain HTTP.
 */
import type { DemoEnv } from "./environment"
import { fillForm, parseForms } from "./html-forms"

/** What the customer typed on a hosted card page. */
export interface CardEntry {
  readonly credit_card_number: string
  readonly card_printed_name: string
  readonly expire_month: string
  readonly expire_year: string
  readonly cvv2?: string
}

const MAX_HOPS = 10

/** Loads a URL, following 30x redirects, and returns the final page and its URL. */
const open = async (env: DemoEnv, request: Request): Promise<{ url: string; html: string; status: number }> => {
  let current = request
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const res = await env.browserFetch(current)
    const location = res.headers.get("location")
    if (res.status >= 300 && res.status < 400 && location) {
      current = new Request(new URL(location, current.url))
      continue
    }
    return { url: current.url, html: await res.text(), status: res.status }
  }
  throw new Error(`too many redirects from ${request.url}`)
}

const submit = (env: DemoEnv, form: ReturnType<typeof parseForms>[number], body: URLSearchParams) =>
  open(env, new Request(form.action, { method: form.method, body, headers: { "content-type": "application/x-www-form-urlencoded" } }))

/** Follows auto-submitting final-redirect forms (the page posts itself back to the merchant). */
const followAutoSubmit = async (env: DemoEnv, page: { url: string; html: string; status: number }) => {
  let current = page
  for (let hop = 0; hop < MAX_HOPS && /\.submit\(\)/.test(current.html); hop++) {
    const form = parseForms(current.html, current.url)[0]
    if (!form) break
    current = await submit(env, form, fillForm(form, {}))
  }
  return current
}

/** Passes or fails the 3-D Secure challenge at `redirectUrl`, then returns to the merchant. */
export const answerChallenge = async (env: DemoEnv, redirectUrl: string, pass: boolean) => {
  const page = await open(env, new Request(redirectUrl))
  const form = parseForms(page.html, page.url).find((f) => f.fields.some(([n, v]) => n === "result" && v === (pass ? "pass" : "fail")))
  if (!form) throw new Error(`no ${pass ? "pass" : "fail"} button on the access-control page (${page.status})`)
  return followAutoSubmit(env, await submit(env, form, fillForm(form, {})))
}

/** Fills the hosted page at `redirectUrl` with `entry`; a 3DS card then meets the challenge. */
export const payOnHostedPage = async (env: DemoEnv, redirectUrl: string, entry: Readonly<Record<string, string>>, passChallenge = true) => {
  const page = await open(env, new Request(redirectUrl))
  const form = parseForms(page.html, page.url)[0]
  if (!form) throw new Error(`no form on the hosted page (${page.status})`)
  let next = await submit(env, form, fillForm(form, entry))
  if (next.status >= 400) throw new Error(`the hosted page refused the entry (${next.status})`)
  const challenge = parseForms(next.html, next.url).find((f) => f.fields.some(([n]) => n === "result"))
  if (challenge) return answerChallenge(env, next.url, passChallenge)
  return followAutoSubmit(env, next)
}
