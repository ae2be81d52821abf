/**
 * The database URL is a secret (it holds the password). The run takes it from `PAYKIT_DATABASE_URL`
 * (or, visibly, from `--database-url`), hands it to its workers through their environment, never
 * through argv, and prints it only masked: every line the run prints goes through {@link masked}.
 */

/** `postgres://user:***@host:port/db`: the URL with its password (and any query string) hidden. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    u.search = u.search === "" ? "" : "?***"
    return u.href
  } catch {
    return "(a URL that does not parse)"
  }
}

/** The password of a `postgres://` URL, decoded (`undefined` when it has none or does not parse). */
export function passwordOf(url: string): string | undefined {
  try {
    const password = new URL(url).password
    return password === "" ? undefined : decodeURIComponent(password)
  } catch {
    return undefined
  }
}

/**
 * A masker for output lines: each given URL, its password alone (raw and percent-encoded) and the
 * URL's query string are replaced wherever they occur, so an error message quoting a connection
 * string (or only its password) prints masked.
 */
export function masker(urls: ReadonlyArray<string | undefined>): (text: string) => string {
  const secrets = new Set<string>()
  for (const url of urls) {
    if (url === undefined || url === "") continue
    secrets.add(url)
    const password = passwordOf(url)
    if (password !== undefined && password.length >= 3) {
      secrets.add(password)
      secrets.add(encodeURIComponent(password))
    }
  }
  // Longest first: the whole URL is replaced before its password inside it.
  const ordered = [...secrets].sort((a, b) => b.length - a.length)
  return (text) => {
    let out = text
    for (const secret of ordered) out = out.split(secret).join(secret.includes("://") ? maskUrl(secret) : "***")
    return out
  }
}
