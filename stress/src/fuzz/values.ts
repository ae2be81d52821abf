/**
 * fast-check arbitraries for hostile wire values: empty, huge, wrong "types" (numbers, booleans,
 * JSON, exponent notation), unicode of every plane, control characters, lone surrogates, and
 * look-alikes of card numbers and amounts.
 */
import fc from "fast-check"

/** Values a field may take on the wire (always a string there). */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constant("") },
  { weight: 4, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 3, arbitrary: fc.string({ unit: "grapheme", maxLength: 16 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 16 }) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "-1", "0", "1e3", "NaN", "Infinity", "0x10", "10.999", "10.5.5", " 10.00", "10,00", "00.10", "99999999999999999999",
      "true", "null", "undefined", "[]", "{}", "%00", "\u0000", "\r\n", "\t", "<script>", "' OR 1=1 --", "\uD800", "\uDFFF",
      "4111111111111111", "4111111111111112", "5555555555554444", "000", "12", "13", "2099", "1999", "USD", "usd", "XXX", "JPY",
      "https://", "http://x", "javascript:alert(1)", "Y", "N", "U", "day", "SRC", "a@b", "@", "+", "%", "%zz", "\u202e", "🙂"
    )
  },
  // Huge values: past every maxLength of the spec (the largest is order_desc, 65,535).
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1_025, max: 70_000 }), fc.constantFrom("9", "a", "é", "%")).map(([n, c]) => c.repeat(n)) }
)

/** Raw fragments appended to an encoded form body: broken percent-escapes, invalid UTF-8, odd separators. */
export const rawFragment: fc.Arbitrary<string> = fc.constantFrom(
  "%zz=1", "a=%", "a=%4", "%E0%A4%A=1", "amount=%FF%FE", "email=%C3%28", "x=%ED%A0%80", "&&&", "=", "=x", "control",
  "%=%", "a=b=c", "+=+", "login=%00", "client_orderid=%F0%9F", "currency=%u0055SD"
)

/** A header value that the Headers constructor accepts (visible ASCII and spaces). */
export const headerValue: fc.Arbitrary<string> = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,40}[\x21-\x7e])?$/)

export const acceptHeader: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 16, arbitrary: fc.constant("application/vnd.pay+json") },
  { weight: 4, arbitrary: fc.constantFrom(undefined, "application/json", "*/*", "text/html", "APPLICATION/VND.PAY+JSON", "text/html, application/vnd.pay+json;q=0.9", "application/vnd.pay+json; charset=utf-8", "application/vnd.pay") },
  { weight: 1, arbitrary: headerValue }
)

export const contentTypeHeader: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 16, arbitrary: fc.constant("application/x-www-form-urlencoded") },
  { weight: 4, arbitrary: fc.constantFrom(undefined, "application/x-www-form-urlencoded; charset=utf-8", "APPLICATION/X-WWW-FORM-URLENCODED", "application/json", "multipart/form-data; boundary=x", "text/plain", "application/x-www-form-urlencodedX") },
  { weight: 1, arbitrary: headerValue }
)

export const authorizationHeader: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: headerValue },
  { weight: 1, arbitrary: headerValue.map((v) => `OAuth ${v}`) },
  {
    weight: 2,
    arbitrary: fc
      .record({
        key: fc.constantFrom("paykit-test", "", "nobody", "paykit-test\u0000"),
        nonce: fc.oneof(fc.constant("n1"), fc.constant(""), headerValue),
        sig: fc.oneof(fc.constant("AAAA"), fc.constant(""), fc.constant("!!"), headerValue),
        method: fc.constantFrom("HMAC-SHA1", "RSA-SHA256", "PLAINTEXT", "hmac-sha1", ""),
        ts: fc.oneof(fc.constant(String(Math.floor(Date.now() / 1000))), fc.constantFrom("", "-1", "1e9", "99999999999999999999", "abc")),
        version: fc.constantFrom("1.0", "2.0", undefined),
        dup: fc.boolean()
      })
      .map((p) => {
        const parts = [`oauth_consumer_key="${p.key.replace(/[\u0000"]/g, "")}"`, `oauth_nonce="${p.nonce.replace(/"/g, "")}"`, `oauth_signature="${p.sig.replace(/"/g, "")}"`, `oauth_signature_method="${p.method}"`, `oauth_timestamp="${p.ts}"`]
        if (p.version !== undefined) parts.push(`oauth_version="${p.version}"`)
        if (p.dup) parts.push(`oauth_nonce="again"`)
        return `OAuth ${parts.join(", ")}`
      })
  }
)

/** Names for extra fields: known field names of other operations, oauth_* names, and junk. */
export const extraName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("control", "login", "orderid", "amount", "currency", "oauth_signature", "oauth_nonce", "__proto__", "constructor", "toString", "x-foo", ""),
  fc.string({ minLength: 1, maxLength: 12 })
)
