/**
 * The hosted payment (or payout destination) form as a customer sees it: labelled fields, the
 * card number grouped as it is typed with its brand shown, errors inline beside their field (and
 * summarised on top after a refused submit), the test environment marked. The field names posted
 * are the gateway's (`credit_card_number`, `card_printed_name`, `expire_month`, `expire_year`,
 * `cvv2`); the card number and CVV are never echoed back into the page.
 *
 * @packageDocumentation
 */
import { luhnValid } from "@paykit/contracts/card-data"
import { esc } from "../http/html-escape"
import { page } from "./html"

/** A field's error message, by field name (`destination` for the payout choice). */
export type FormErrors = Readonly<Record<string, string>>

/** What the form page needs to know about the order. */
interface FormPageInput {
  readonly action: string
  readonly orderid: string
  readonly amount: string
  readonly currency: string
  readonly payout: boolean
  readonly errors: FormErrors
  readonly previous: URLSearchParams
}

interface FieldOptions {
  readonly keep?: boolean
  readonly autocomplete?: string
  readonly inputmode?: "numeric" | "text" | "tel"
  readonly hint?: string
  readonly maxlength?: number
  readonly pan?: boolean
}

/** Test cards named on the form (grouped as the script groups them: by four, Amex 4-6-5). */
const TEST_CARDS = [
  ["4111 1111 1111 1111", "approved"],
  ["4000 0000 0000 0002", "declined"],
  ["4000 0000 0000 3220", "3-D Secure challenge"]
] as const

/** The form page (200, or 400 with the errors shown). */
export function formPageHtml(input: FormPageInput): string {
  const { errors, previous, payout } = input
  const field = (name: string, label: string, opts: FieldOptions = {}): string => {
    // Card number and CVV are never echoed back, even after an error.
    const value = opts.keep === false ? "" : previous.get(name) ?? ""
    const error = errors[name]
    const described = [opts.pan === true ? `${name}-brand` : "", error === undefined ? "" : `${name}-error`].filter((s) => s !== "").join(" ")
    const attrs = [
      opts.autocomplete === undefined ? "" : ` autocomplete="${opts.autocomplete}"`,
      opts.inputmode === undefined ? "" : ` inputmode="${opts.inputmode}"`,
      opts.maxlength === undefined ? "" : ` maxlength="${opts.maxlength}"`,
      described === "" ? "" : ` aria-describedby="${described}"`,
      error === undefined ? "" : ` aria-invalid="true"`
    ].join("")
    const inputHtml = `<input id="${name}" name="${name}" value="${esc(value)}"${attrs}>`
    return `<div class="field" data-for="${name}"><label for="${name}">${esc(label)}${opts.hint === undefined ? "" : ` <span class="hint">${esc(opts.hint)}</span>`}</label>
${opts.pan === true ? `<div class="pan">${inputHtml}<span class="card-brand" id="${name}-brand" data-brand="UNKNOWN" aria-live="polite">Card</span></div>` : inputHtml}
${error === undefined ? "" : `<p class="error" id="${name}-error" data-field="${name}">${esc(error)}</p>`}</div>`
  }
  const cardFields = `${field("credit_card_number", "Card number", { keep: false, autocomplete: "cc-number", inputmode: "numeric", maxlength: 23, pan: true })}
${field("card_printed_name", "Name on card", { autocomplete: "cc-name" })}
<div class="row">${field("expire_month", "Expiry month", { autocomplete: "cc-exp-month", inputmode: "numeric", hint: "MM", maxlength: 2 })}
${field("expire_year", "Expiry year", { autocomplete: "cc-exp-year", inputmode: "numeric", hint: "YY or YYYY", maxlength: 4 })}
${payout ? "" : field("cvv2", "Security code", { keep: false, autocomplete: "cc-csc", inputmode: "numeric", hint: "CVV", maxlength: 4 })}</div>`
  const body = payout
    ? `<p>Enter exactly one destination for the payout.</p>
${errors["destination"] === undefined ? "" : `<p class="error" id="destination-error" data-field="destination">${esc(errors["destination"])}</p>`}
<fieldset><legend>Card</legend>${cardFields}</fieldset>
<fieldset><legend>Bank account</legend>${field("account_number", "Account number")}</fieldset>
<fieldset><legend>Phone</legend>${field("destination_phone", "Phone number", { inputmode: "tel", autocomplete: "tel" })}</fieldset>`
    : cardFields
  const listed = Object.entries(errors)
  const summaryOfErrors = listed.length === 0
    ? ""
    : `<div class="error-summary" role="alert" tabindex="-1" id="error-summary"><h2>Please check ${listed.length === 1 ? "this field" : `these ${listed.length} fields`}</h2><ul>${listed.map(([name, message]) => `<li><a href="#${name === "destination" ? "credit_card_number" : esc(name)}">${esc(message)}</a></li>`).join("")}</ul></div>`
  const amount = `${esc(input.amount)} ${esc(input.currency)}`
  const testNote = payout
    ? ""
    : `<p class="test-note">Test environment: no real card is charged. Try ${TEST_CARDS.map(([pan, what]) => `<code>${pan}</code> (${what})`).join(", ")}, any future expiry and any 3-digit code.</p>`
  return page(
    payout ? "Payout destination" : "Card payment",
    `${summaryOfErrors}<form id="payment-form" method="post" action="${esc(input.action)}" novalidate>
${body}
<button type="submit" id="submit">${payout ? `Send payout of ${amount}` : `Pay ${amount}`}</button>
</form>
${testNote}`,
    {
      summary: `<div class="summary"><p class="muted">Order ${esc(input.orderid)}</p><p class="amount"><span class="sr">Amount: </span>${amount}</p></div>`,
      script: FORM_SCRIPT
    }
  )
}

/**
 * Card grouping, brand detection and inline checks; the server checks everything again. The inline
 * Luhn check is the source of `luhnValid` (`@paykit/contracts/card-data`, self-contained).
 */
const FORM_SCRIPT = `
(function(){
  var form=document.getElementById("payment-form");if(!form)return;
  var pan=document.getElementById("credit_card_number"),chip=document.getElementById("credit_card_number-brand");
  function brand(d){if(/^4/.test(d))return"VISA";var two=+d.slice(0,2),four=+d.slice(0,4);
    if((two>=51&&two<=55)||(d.length>=4&&four>=2221&&four<=2720))return"MASTERCARD";if(two===34||two===37)return"AMEX";
    if(/^6011/.test(d)||two===65)return"DISCOVER";return"UNKNOWN"}
  var NAMES={VISA:"Visa",MASTERCARD:"Mastercard",AMEX:"Amex",DISCOVER:"Discover",UNKNOWN:"Card"};
  function group(d,b){if(b==="AMEX")return[d.slice(0,4),d.slice(4,10),d.slice(10,15)].filter(Boolean).join(" ");return d.replace(/(\\d{4})(?=\\d)/g,"$1 ")}
  var luhn=(${luhnValid.toString()});
  function setError(input,message){var id=input.id+"-error",el=document.getElementById(id),box=input.closest(".field");
    var ids=(input.getAttribute("aria-describedby")||"").split(" ").filter(function(x){return x&&x!==id});
    if(message){if(!el){el=document.createElement("p");el.className="error";el.id=id;el.setAttribute("data-field",input.id);box.appendChild(el)}
      el.textContent=message;input.setAttribute("aria-invalid","true");ids.push(id)}
    else{if(el)el.remove();input.removeAttribute("aria-invalid")}
    if(ids.length)input.setAttribute("aria-describedby",ids.join(" "));else input.removeAttribute("aria-describedby")}
  function check(input){var v=input.value.trim(),d=v.replace(/[\\s-]/g,"");
    switch(input.id){
      case"credit_card_number":if(!v&&form.querySelector("#account_number"))return"";return /^[0-9]{12,19}$/.test(d)&&luhn(d)?"":"Enter a valid card number";
      case"card_printed_name":if(!v&&form.querySelector("#account_number")&&!pan.value.trim())return"";return v&&v.length<=128?"":"Enter the name printed on the card";
      case"expire_month":if(!v&&form.querySelector("#account_number")&&!pan.value.trim())return"";return /^(0[1-9]|1[0-2])$/.test(v)?"":"Enter the month as two digits (01-12)";
      case"expire_year":if(!v&&form.querySelector("#account_number")&&!pan.value.trim())return"";return /^([0-9]{2}|[0-9]{4})$/.test(v)?"":"Enter the year as two or four digits";
      case"cvv2":return /^[0-9]{3,4}$/.test(v)?"":"Enter the 3 or 4 digit security code";
    }return""}
  if(pan&&chip){pan.addEventListener("input",function(){var atEnd=pan.selectionStart===pan.value.length;var d=pan.value.replace(/\\D/g,"").slice(0,19),b=brand(d);
    pan.value=group(d,b);if(atEnd)pan.setSelectionRange(pan.value.length,pan.value.length);
    if(chip.getAttribute("data-brand")!==b){chip.setAttribute("data-brand",b);chip.textContent=NAMES[b]}})}
  ["credit_card_number","card_printed_name","expire_month","expire_year","cvv2"].forEach(function(id){var input=document.getElementById(id);if(!input)return;
    input.addEventListener("blur",function(e){
      // Leaving for the submit button: the submit check runs; an error inserted now would move the button away from the click.
      if(e.relatedTarget&&e.relatedTarget.type==="submit")return;
      if(input.value.trim()!==""||input.hasAttribute("aria-invalid"))setError(input,check(input))})});
  form.addEventListener("submit",function(e){var first=null;
    ["credit_card_number","card_printed_name","expire_month","expire_year","cvv2"].forEach(function(id){var input=document.getElementById(id);if(!input)return;
      var m=check(input);setError(input,m);if(m&&!first)first=input});
    if(first){e.preventDefault();first.focus()}});
})();
`
