/**
 * The dashboard's stylesheet and its one script. The script only keeps the page live: it polls
 * `GET /__sim/requests?after=N`, adds the new rows (as text, never as HTML), and then swaps in a
 * fresh `GET /__sim/ui/orders` unless the user is typing in it. Every action is a plain form, so
 * the page works without the script too.
 *
 * @packageDocumentation
 */

/** Mobile first; from 1000 px the orders and the side panels sit side by side. */
export const DASHBOARD_CSS = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1c2330;background:#f3f5f8}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:6px;z-index:2}
.top{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;gap:4px 16px;padding:10px 16px;background:#1d2b4f;color:#fff}
.top p{margin:0}.brand{font-weight:700;letter-spacing:.02em}
.env{background:#ffd54a;color:#2b2100;font-weight:700;font-size:13px;padding:2px 8px;border-radius:4px}
main{max-width:1440px;margin:0 auto;padding:12px 16px 40px}
h1{font-size:22px;margin:8px 0 12px}h2{font-size:18px;margin:0 0 8px}h3{font-size:15px;margin:14px 0 6px}
.layout{display:grid;gap:16px;grid-template-columns:minmax(0,1fr)}
.layout>*{min-width:0}
/* The page reads actions, orders, log (a phone shows them so); from 1000 px the orders take the left column. */
@media (min-width:1000px){.layout{grid-template-columns:minmax(0,1fr) minmax(0,600px);grid-template-rows:auto 1fr;grid-template-areas:"orders actions" "orders log";align-items:start}
#orders{grid-area:orders}.actions{grid-area:actions}.log{grid-area:log}}
.panel,.order{background:#fff;border:1px solid #d5dbe5;border-radius:8px;padding:12px 14px}
.order{margin:0 0 12px}.order header h3{margin:0;font-size:16px;display:flex;flex-wrap:wrap;gap:6px;align-items:center}
.meta{margin:4px 0 8px;color:#3d4656;overflow-wrap:anywhere}
code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#eef1f6;padding:0 3px;border-radius:3px}
.card{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
.ledger{display:grid;grid-template-columns:repeat(auto-fill,minmax(104px,1fr));gap:6px;margin:0 0 10px}
.ledger div{background:#f6f8fb;border-radius:6px;padding:4px 8px}
.ledger dt{font-size:12px;color:#4a5468}.ledger dd{margin:0;font-weight:600;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto;margin:0 0 8px;position:relative}
.scroll:focus{outline:2px solid #2f5bd3;outline-offset:2px}
table{border-collapse:collapse;width:100%;font-size:13px}
caption{text-align:left;font-weight:600;padding:2px 0 4px}
th,td{text-align:left;padding:4px 6px;border-bottom:1px solid #e4e8ef;white-space:nowrap;vertical-align:middle}
th{font-size:12px;color:#4a5468;font-weight:600}
.num{text-align:right;font-variant-numeric:tabular-nums}
td.op{white-space:normal;overflow-wrap:anywhere;min-width:9rem}
.badge{display:inline-block;font-size:12px;font-weight:600;padding:1px 8px;border-radius:999px;background:#e8ebf1;color:#2d3648}
.s-approved{background:#dff3e5;color:#0b5a26}.s-declined,.s-error,.s-filtered{background:#fbe3e3;color:#8a1717}
.s-processing,.s-unknown{background:#fff0d1;color:#6b4300}
.good{color:#0b5a26;font-weight:600}.bad{color:#a01616;font-weight:600}.warn{color:#7a4a00;font-weight:600}
.muted{color:#4f596b}.small{font-size:12px;font-weight:400}.count{font-size:14px;color:#4f596b;font-weight:400}
.empty{background:#fff;border:1px dashed #b7c0cf;border-radius:8px;padding:16px}
.act{display:inline-flex;flex-wrap:wrap;align-items:flex-end;gap:6px;margin:0 8px 8px 0}
.act label{display:block;width:100%;font-size:13px;color:#3d4656}
.row{display:flex;flex-wrap:wrap}
input{font:inherit;padding:6px 8px;border:1px solid #8792a6;border-radius:6px;min-width:0}
button{font:inherit;font-weight:600;padding:7px 12px;border-radius:6px;border:1px solid #2547a8;background:#2f55c4;color:#fff;cursor:pointer}
button:hover{background:#2547a8}button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid #f5b400;outline-offset:1px}
button.small{padding:3px 9px;font-size:13px}
button.danger{background:#b3261e;border-color:#8c1d17}button.danger:hover{background:#8c1d17}
.order-actions{display:flex;flex-wrap:wrap;gap:4px;border-top:1px solid #e4e8ef;padding-top:8px}
.note{padding:8px 12px;border-radius:6px;margin:0 0 12px;overflow-wrap:anywhere}
.note.ok{background:#dff3e5;color:#0b4a20}.note.fail{background:#fbe3e3;color:#7a1010}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`

/** Polls the request log and refreshes the orders; rows are built with textContent. */
export const DASHBOARD_SCRIPT = `
(function(){
  var table=document.getElementById("log");if(!table)return;
  var body=table.tBodies[0],last=Number(table.getAttribute("data-last-seq"))||0,busy=false;
  function cell(tr,text,cls){var td=document.createElement("td");td.textContent=text;if(cls)td.className=cls;tr.appendChild(td)}
  function row(r){var tr=document.createElement("tr");tr.setAttribute("data-seq",String(r.seq));
    cell(tr,new Date(r.at).toISOString().slice(11,23));cell(tr,/^[A-Z0-9_]+$/.test(r.operation)?r.operation:r.method+" "+r.path,"op");
    cell(tr,r.clientOrderId||"");cell(tr,r.status===0?"reset":String(r.status),r.status===0||r.status>=500?"bad":r.status>=400?"warn":"");
    cell(tr,r.errorCode||"");cell(tr,String(r.ms),"num");return tr}
  function refreshOrders(){var orders=document.getElementById("orders");
    if(!orders||orders.contains(document.activeElement))return Promise.resolve();
    return fetch("/__sim/ui/orders",{cache:"no-store"}).then(function(res){return res.ok?res.text():null}).then(function(html){if(html!==null&&!orders.contains(document.activeElement))orders.innerHTML=html})}
  function poll(){if(busy||document.hidden)return;busy=true;
    fetch("/__sim/requests?after="+last,{cache:"no-store"}).then(function(res){return res.ok?res.json():[]}).then(function(list){
      if(list.length===0)return;
      list.forEach(function(r){body.insertBefore(row(r),body.firstChild);last=Math.max(last,r.seq)});
      while(body.rows.length>${100})body.deleteRow(body.rows.length-1);
      var empty=document.getElementById("log-empty");if(empty)empty.remove();
      return refreshOrders()}).catch(function(){}).then(function(){busy=false})}
  setInterval(poll,1500);
})();
`
