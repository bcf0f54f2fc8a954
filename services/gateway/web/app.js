// GPU Advisor comparison page: plain JS, no dependencies. Talks to the
// gateway's HTTP/JSON API (docs/http.md); every validation error shown comes
// from the service itself, with the field it names highlighted.
'use strict';

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

const GB = 1e9;
const MEMORY_PARTS = [
  ['weights', 'weights_bytes', 'Weights'],
  ['gradients', 'gradients_bytes', 'Gradients'],
  ['optimizer', 'optimizer_bytes', 'Optimizer'],
  ['activations', 'activations_bytes', 'Activations'],
  ['kv', 'kv_cache_bytes', 'KV cache'],
  ['overhead', 'overhead_bytes', 'Overhead'],
];
const COST_PARTS = [
  ['compute', 'compute_usd', 'compute'],
  ['storage', 'storage_usd', 'storage'],
  ['egress', 'egress_usd', 'egress'],
  ['preemption', 'preemption_usd', 'preemption'],
];
const PROVIDER_COLORS = ['#2457d6', '#f79009', '#12b76a', '#d444f1', '#c4320a', '#0e9384',
                         '#7a5af8', '#667085', '#dc6803', '#155eef', '#099250', '#b42318'];
const TRAINING = new Set(['TASK_PRETRAIN', 'TASK_FULL_FINETUNE', 'TASK_LORA', 'TASK_QLORA']);

let lastRequest = null;
let rankedRows = [];
let offersRows = [];
let nextOffersToken = '';
let offersSeq = 0;  // a newer browse wins over an older answer still in flight
// "Allow spot" follows the API's default for the task (training: on-demand and
// spot; an endpoint or batch job, which cannot resume: on-demand) until the
// user changes it; untouched, the request leaves purchase_options to the
// service, which states its choice under "Assumed for you".
let spotTouched = false;

// ---------- helpers ----------
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k === 'style') node.setAttribute('style', v);
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}
const svgEl = (tag, attrs = {}) => {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};
const usd = (x) => (x >= 100 ? '$' + Math.round(x).toLocaleString('en-US')
                             : '$' + Number(x).toFixed(2));
const hours = (h) => (h >= 100 ? Math.round(h).toLocaleString('en-US') : Number(h).toFixed(h < 10 ? 2 : 1));
const gb = (bytes) => (Number(bytes) / GB).toFixed(1);
const purchaseName = (p) => ({PURCHASE_OPTION_SPOT: 'spot', PURCHASE_OPTION_RESERVED: 'reserved'}[p] || 'on-demand');
const list = (text) => text.split(',').map((s) => s.trim()).filter(Boolean);
// A number when it parses, with the CLI's suffixes (50M, 1B, 8K, 1.5T: K=1e3,
// M=1e6, B or G=1e9, T=1e12, P=1e15; 5e7), else the text itself, so the
// service names the bad field.
const SUFFIXES = {K: 1e3, M: 1e6, B: 1e9, G: 1e9, T: 1e12, P: 1e15};
function numberOrText(text) {
  const t = String(text).trim();
  const m = /^([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*([kmbgtp]?)$/i.exec(t);
  if (!m) return t;
  const value = Number(m[1]) * (m[2] ? SUFFIXES[m[2].toUpperCase()] : 1);
  return Number.isFinite(value) ? Number(value.toPrecision(15)) : t;
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body ? {'Content-Type': 'application/json'} : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  let data = null;
  try { data = JSON.parse(text); } catch (e) { data = text; }
  return {ok: response.ok, status: response.status, data};
}

// ---------- Hugging Face config.json -> Model ----------
function modelFromHfConfig(text) {
  let cfg;
  try { cfg = JSON.parse(text); } catch (e) {
    throw {field: 'workload.model', message: 'workload.model: config.json is not valid JSON (' + e.message + ')'};
  }
  if (cfg.text_config) cfg = Object.assign({}, cfg, cfg.text_config);  // multimodal wrappers
  const pick = (...keys) => { for (const k of keys) if (cfg[k] != null) return cfg[k]; return undefined; };
  const model = {
    name: pick('_name_or_path', 'model_type') || 'custom',
    source: 'config.json pasted in the web page',
    layers: pick('num_hidden_layers', 'n_layer', 'num_layers'),
    hidden_size: pick('hidden_size', 'n_embd', 'd_model'),
    attention_heads: pick('num_attention_heads', 'n_head'),
    kv_heads: pick('num_key_value_heads'),
    head_dim: pick('head_dim'),
    intermediate_size: pick('intermediate_size', 'ffn_dim'),
    vocab_size: pick('vocab_size'),
    experts: pick('num_local_experts', 'n_routed_experts', 'num_experts'),
    active_experts: pick('num_experts_per_tok'),
    shared_experts: pick('n_shared_experts'),
    expert_intermediate_size: pick('moe_intermediate_size'),
    dense_layers: pick('first_k_dense_replace'),
    max_context_length: pick('max_position_embeddings'),
    tied_embeddings: pick('tie_word_embeddings'),
    kv_lora_rank: pick('kv_lora_rank'),
    qk_rope_head_dim: pick('qk_rope_head_dim'),
    sliding_window: pick('sliding_window'),
  };
  for (const k of Object.keys(model)) if (model[k] == null) delete model[k];
  return model;
}

// ---------- the request, from the form ----------
function buildRequest() {
  const task = $('#task').value;
  const workload = {task};
  if ($('#model-source').value === 'hf') {
    workload.model = modelFromHfConfig($('#hf-config').value);
  } else {
    workload.model = {preset: $('#preset').value.trim()};
  }
  if (TRAINING.has(task)) {
    workload.train_tokens = numberOrText($('#train-tokens').value);
    workload.sequence_length = numberOrText($('#sequence-length').value);
  } else {
    workload.context_length = numberOrText($('#context-length').value);
    workload.concurrent_sequences = numberOrText($('#concurrency').value);
    if (task === 'TASK_BATCH_INFERENCE') workload.requests = numberOrText($('#requests').value);
    for (const [sel, key] of [['#prompt-tokens', 'prompt_tokens'], ['#output-tokens', 'output_tokens']]) {
      if ($(sel).value.trim() !== '') workload[key] = numberOrText($(sel).value);
    }
  }
  if ($('#egress').value.trim() !== '') workload.egress_gb = numberOrText($('#egress').value);
  const constraints = {objective: $('#objective').value};
  if (!TRAINING.has(task)) {
    // Serving SLOs; empty = unset (an endpoint's default per-user floor is
    // stated in the answer's assumptions).
    const slos = [['#max-ttft', 'max_time_to_first_token_seconds'], ['#min-user-tps', 'min_user_tokens_per_second']];
    for (const [sel, key] of slos) if ($(sel).value.trim() !== '') constraints[key] = numberOrText($(sel).value);
  }
  const optional = [['#max-total', 'max_total_usd'], ['#max-hourly', 'max_usd_per_hour'], ['#deadline', 'deadline_hours']];
  for (const [sel, key] of optional) if ($(sel).value.trim() !== '') constraints[key] = numberOrText($(sel).value);
  if (list($('#providers').value).length) constraints.providers = list($('#providers').value);
  if (list($('#regions').value).length) constraints.regions = list($('#regions').value);
  if (list($('#exclude-providers').value).length) constraints.exclude_providers = list($('#exclude-providers').value);
  if ($('#host-tier').value) constraints.host_tier = $('#host-tier').value;
  if ($('#min-host-reliability').value.trim() !== '') {
    constraints.min_host_reliability = numberOrText($('#min-host-reliability').value);
  }
  if (!$('#group-regions').checked) constraints.group_regions = false;
  if ($('#commit-years').value.trim() !== '') {
    constraints.max_commitment_years = numberOrText($('#commit-years').value);
  }
  if ($('#upfront').value) constraints.upfront_payments = [$('#upfront').value];
  if (spotTouched) {
    constraints.purchase_options = $('#spot').checked
      ? ['PURCHASE_OPTION_ON_DEMAND', 'PURCHASE_OPTION_SPOT'] : ['PURCHASE_OPTION_ON_DEMAND'];
  }
  return {workload, constraints, max_results: numberOrText($('#max-results').value)};
}

// ---------- errors ----------
// {status, message, field} of an error answer: google.rpc.Status JSON (code,
// message, details: ErrorInfo.reason is the code's name, BadRequest the field).
function errorOf(res) {
  const d = res.data;
  if (!d || typeof d !== 'object' || d.message === undefined) return {status: 'HTTP ' + res.status, message: String(d)};
  const details = Array.isArray(d.details) ? d.details : [];
  const info = details.find((x) => x.reason);
  const bad = details.find((x) => Array.isArray(x.field_violations) && x.field_violations.length);
  return {status: info ? info.reason : 'HTTP ' + res.status, message: d.message,
          field: bad ? bad.field_violations[0].field : undefined};
}

function clearErrors(form) {
  $$('.invalid', form).forEach((n) => n.classList.remove('invalid'));
  $$('.field-error', form).forEach((n) => n.remove());
  const banner = $('.error-banner', form);
  banner.hidden = true;
  banner.textContent = '';
}

// Shows {status, message, field} and marks the input whose data-field is the
// longest prefix of the field the service named.
function showError(form, error) {
  const banner = $('.error-banner', form);
  banner.hidden = false;
  banner.replaceChildren(el('strong', {text: (error.status || 'ERROR') + ': '}), document.createTextNode(error.message || ''));
  if (!error.field) return;
  let best = null;
  for (const input of $$('[data-field]', form)) {
    const f = input.dataset.field;
    if (input.closest('[hidden]')) continue;
    if ((error.field === f || error.field.startsWith(f + '.') || error.field.startsWith(f + '['))
        && (!best || f.length > best.dataset.field.length)) best = input;
  }
  if (!best) return;
  const label = best.closest('label') || best;
  label.classList.add('invalid');
  const detail = error.message.startsWith(error.field + ': ') ? error.message.slice(error.field.length + 2) : error.message;
  label.append(el('span', {class: 'field-error', text: detail}));
  best.focus();
}

// ---------- ranked table ----------
function memoryBar(rec) {
  const capacity = Number(rec.gpu_memory_bytes) || Number(rec.memory.total_bytes) || 1;
  const bar = el('div', {class: 'bar'});
  const tip = [];
  for (const [cls, key, label] of MEMORY_PARTS) {
    const bytes = Number(rec.memory[key] || 0);
    if (bytes <= 0) continue;
    bar.append(el('span', {class: 'seg-' + cls, style: `width:${Math.min(100, (100 * bytes) / capacity)}%`}));
    tip.push(`${label} ${gb(bytes)} GB`);
  }
  const wrap = el('div', {title: tip.join('\n')}, bar,
                  el('div', {class: 'bar-caption', text: `${gb(rec.memory.total_bytes)} of ${gb(capacity)} GB`}));
  return wrap;
}

function costCell(rec) {
  const total = rec.cost.total_usd || 1;
  const bar = el('div', {class: 'bar cost'});
  const parts = [];
  for (const [cls, key, label] of COST_PARTS) {
    const v = rec.cost[key] || 0;
    if (v <= 0) continue;
    bar.append(el('span', {class: 'seg-' + cls, style: `width:${(100 * v) / total}%`}));
    parts.push(`${label} ${usd(v)}`);
  }
  return el('div', {title: parts.join('\n')}, bar, el('div', {class: 'bar-caption', text: parts.join(' · ')}));
}

function rowData(rec) {
  const o = rec.offer;
  return {
    rec,
    rank: rec.rank,
    provider: o.provider,
    instance: o.instance_type,
    gpus: `${o.gpus_per_node}× ${o.gpu_model}${o.nodes > 1 ? ` × ${o.nodes}` : ''}`,
    purchase: purchaseName(rec.purchase_option),
    usd_per_hour: rec.cost.usd_per_hour,
    hours: rec.estimated_hours,
    total: rec.cost.total_usd,
    memory: Number(rec.memory.total_bytes) / (Number(rec.gpu_memory_bytes) || 1),
    warnings: rec.warnings.length,
    ttft: isServing(rec) ? rec.serving.time_to_first_token_seconds : 0,
    user_tps: isServing(rec) ? rec.serving.tokens_per_second_per_user : 0,
    usd_per_mtok: isServing(rec) ? rec.serving.usd_per_million_output_tokens : 0,
  };
}

// ---------- serving numbers (TASK_INFERENCE, TASK_BATCH_INFERENCE) ----------
// Shown as the API returns them (Recommendation.serving), only rounded; each
// value also sits in data-value for scripts and tests.
const isServing = (rec) => Boolean(rec.serving && rec.serving.replicas > 0);
const fixed = (digits) => (v) => Number(v).toLocaleString('en-US', {minimumFractionDigits: digits, maximumFractionDigits: digits});
const BOUND_NAMES = {
  SERVING_BOUND_PREFILL: 'prefill (processing prompts)',
  SERVING_BOUND_DECODE: 'decode (generating tokens)',
  SERVING_BOUND_KV_CAPACITY: 'KV-cache capacity (memory for more sequences)',
};
// [key in ServingEstimate, label, unit, format, scale for display]
const SERVING_FIELDS = [
  ['time_to_first_token_seconds', 'Time to first token', 's', fixed(2), 1],
  ['inter_token_latency_seconds', 'Inter-token latency', 'ms', fixed(1), 1000],
  ['tokens_per_second_per_user', 'Tokens/s per user at full load', 'tokens/s', fixed(1), 1],
  ['decode_tokens_per_second_per_user', 'Tokens/s per user while decoding only', 'tokens/s', fixed(1), 1],
  ['aggregate_tokens_per_second', 'Total output', 'tokens/s', fixed(0), 1],
  ['requests_per_second', 'Requests', 'per s', fixed(2), 1],
  ['concurrent_sequences', 'Concurrent sequences', '', fixed(0), 1],
  ['replicas', 'Replicas', '', fixed(0), 1],
  ['spare_replicas', 'Spare replicas (spot)', '', fixed(0), 1],
  ['usd_per_million_output_tokens', 'Cost per million output tokens', '', usd, 1],
  ['prefill_fraction', 'Time spent prefilling', '%', fixed(0), 100],
  ['max_concurrency_per_replica', 'KV cache holds, per replica', 'sequences', fixed(0), 1],
  ['kv_cache_capacity_tokens_per_replica', 'KV cache capacity, per replica', 'tokens', fixed(0), 1],
];

function servingDetail(rec, columns) {
  const s = rec.serving;
  const list = el('dl', {class: 'serving-numbers'});
  for (const [key, label, unit, format, scale] of SERVING_FIELDS) {
    const value = Number(s[key] || 0);
    if (key === 'spare_replicas' && value === 0) continue;
    list.append(el('div', {},
      el('dt', {text: label}),
      el('dd', {'data-key': key, 'data-value': String(value), text: format(value * scale) + (unit === '%' ? '%' : unit ? ' ' + unit : '')})));
  }
  // The P10-P90 intervals of the two SLO numbers (Recommendation.*_interval).
  for (const [key, label, format, unit] of [
    ['time_to_first_token_interval', 'Time to first token, P10-P90', fixed(2), 's'],
    ['tokens_per_second_interval', 'Tokens/s in total, P10-P90', fixed(0), 'tokens/s']]) {
    const i = rec[key];
    if (!i || !(i.p50 > 0)) continue;
    list.append(el('div', {},
      el('dt', {text: label}),
      el('dd', {'data-interval': key, 'data-p10': String(i.p10), 'data-p90': String(i.p90),
                text: `${format(i.p10)}–${format(i.p90)} ${unit}`})));
  }
  const bound = BOUND_NAMES[s.throughput_bound];
  const sentence = s.throughput_bound_text || '';
  // One line per offer; every number folded under it (open on click).
  const headline = `#${rec.rank} at full load: ${fixed(2)(s.time_to_first_token_seconds)} s to first token · ` +
    `${fixed(1)(s.tokens_per_second_per_user)} tokens/s per user · ` +
    `${fixed(0)(s.aggregate_tokens_per_second)} tokens/s in total · ${s.replicas} replica${s.replicas === 1 ? '' : 's'}` +
    (bound ? ` · bound by ${bound.split(' (')[0]}` : '');
  return el('tr', {class: 'serving-row', 'data-serving-rank': String(rec.rank)},
    el('td', {colspan: String(columns)},
      el('details', {class: 'serving-detail'},
        el('summary', {class: 'serving-title', text: headline}),
        rec.parallel_plan && rec.parallel_plan.description
          ? el('p', {class: 'serving-plan', text: 'Layout: ' + rec.parallel_plan.description}) : null,
        list,
        bound ? el('p', {class: 'bound', 'data-bound': s.throughput_bound},
                   el('strong', {text: 'Throughput bound: '}), document.createTextNode(bound)) : null,
        sentence ? el('p', {class: 'bound-sentence', text: sentence}) : null)));
}

// Where a recommendation's price comes from and how old it is
// (Recommendation.price); "stale" past its source's budget.
function priceAge(r) {
  const p = r.price;
  if (!p || !p.source) return null;
  const seen = p.last_seen_available_seconds !== undefined ? `; last seen available ${age(p.last_seen_available_seconds)} ago` : '';
  const short = age(p.age_seconds).replace(/ (s|min|h|days)$/, (m, u) => ({s: 's', min: 'm', h: 'h', days: 'd'})[u]);
  return el('div', {class: 'sub price-age' + (p.stale ? ' stale' : ''), 'data-source': p.source,
                    title: `price from ${p.source}, as of ${p.as_of} (${age(p.age_seconds)} old${p.stale ? ', over its budget' : ''})${seen}`},
            document.createTextNode(`${p.source} ${short}${p.stale ? ' !' : ''}`));
}

function renderRanked() {
  const tbody = $('#ranked tbody');
  tbody.replaceChildren();
  const serving = rankedRows.some((row) => isServing(row.rec));
  $$('#ranked th.serving-col').forEach((th) => { th.hidden = !serving; });
  const columns = $$('#ranked thead th').filter((th) => !th.hidden).length;
  for (const row of rankedRows) {
    const r = row.rec;
    const o = r.offer;
    // The first warning shown, the others folded under it (compact rows).
    const warnings = r.warnings.length
      ? el('div', {},
          el('ul', {class: 'warn-list'}, el('li', {text: r.warnings[0]})),
          r.warnings.length > 1
            ? el('details', {class: 'note-list more-warnings'},
                el('summary', {text: `${r.warnings.length - 1} more warning${r.warnings.length === 2 ? '' : 's'}`}),
                el('ul', {class: 'warn-list'}, ...r.warnings.slice(1).map((w) => el('li', {text: w}))))
            : null)
      : el('span', {class: 'none', text: 'none'});
    // Informational notes (context already in the numbers), folded away.
    const noteList = r.notes || [];
    const notes = noteList.length
      ? el('details', {class: 'note-list'},
          el('summary', {text: `${noteList.length} note${noteList.length === 1 ? '' : 's'}`}),
          el('ul', {}, ...noteList.map((n) => el('li', {text: n}))))
      : null;
    tbody.append(el('tr', {class: r.rank === 1 ? 'top' : '', 'data-rank': String(r.rank)},
      el('td', {class: 'rank', text: String(r.rank)}),
      el('td', {}, el('div', {text: o.provider}), el('div', {class: 'sub', text: o.region}),
         // The same offer at the same price in other regions (group_regions).
         (r.also_in_regions || []).length
           ? el('div', {class: 'sub also-in', title: r.also_in_regions.join('; '),
                        text: `+${r.also_in_regions.length} more region${r.also_in_regions.length === 1 ? '' : 's'}`})
           : null),
      el('td', {}, el('div', {class: 'instance', text: o.instance_type}),
         // A serving answer's layout (replicas, TP) is in its folded row below.
         isServing(r) ? null
           : el('div', {class: 'reasons', text: r.parallel_plan && r.parallel_plan.description ? r.parallel_plan.description : ''})),
      el('td', {class: 'nowrap', text: row.gpus}),
      el('td', {}, el('span', {class: 'pill ' + row.purchase, text: row.purchase})),
      el('td', {class: 'num'}, el('div', {text: usd(r.cost.usd_per_hour)}), priceAge(r)),
      el('td', {class: 'num'}, el('div', {text: hours(r.estimated_hours)}),
         interval(r.estimated_hours_interval, hours)),
      el('td', {class: 'num total'}, el('div', {text: usd(r.cost.total_usd)}),
         interval(r.total_usd_interval, usd)),
      el('td', {}, memoryBar(r)),
      el('td', {}, costCell(r)),
      serving ? el('td', {class: 'num ttft', text: isServing(r) ? fixed(2)(r.serving.time_to_first_token_seconds) : '–'}) : null,
      serving ? el('td', {class: 'num user-tps', text: isServing(r) ? fixed(1)(r.serving.tokens_per_second_per_user) : '–'}) : null,
      serving ? el('td', {class: 'num usd-mtok', text: isServing(r) ? usd(r.serving.usd_per_million_output_tokens) : '–'}) : null,
      el('td', {}, warnings, notes)));
    if (isServing(r)) tbody.append(servingDetail(r, columns));
  }
}

function sortRows(rows, key, type, dir) {
  rows.sort((a, b) => {
    const x = a[key], y = b[key];
    const c = type === 'number' ? x - y : String(x).localeCompare(String(y));
    return dir === 'asc' ? c : -c;
  });
}

function makeSortable(table, getRows, render) {
  for (const th of $$('th.sortable', table)) {
    th.addEventListener('click', () => {
      const dir = th.classList.contains('sorted-asc') ? 'desc' : 'asc';
      $$('th', table).forEach((h) => h.classList.remove('sorted-asc', 'sorted-desc'));
      th.classList.add('sorted-' + dir);
      sortRows(getRows(), th.dataset.key, th.dataset.type, dir);
      render();
    });
  }
}

// A P10-P90 interval under a number ("P10-P90 24.0-40.2"); nothing without one.
function interval(i, format) {
  if (!i || !(i.p50 > 0)) return null;
  return el('div', {class: 'sub interval', text: `P10-P90 ${format(i.p10)}–${format(i.p90)}`});
}

// ---------- summary ----------
function renderSummary(resp) {
  const recs = resp.recommendations;
  const summary = $('#summary');
  summary.replaceChildren();
  const stat = (label, value, cls = '') => el('div', {class: 'stat ' + cls},
    el('div', {class: 'label', text: label}), el('div', {class: 'value', text: value}));
  if (recs.length) {
    const best = recs[0];
    summary.append(stat('Best total', usd(best.cost.total_usd), 'best'),
                   stat('Its time', hours(best.estimated_hours) + ' h'),
                   stat('Its offer', `${best.offer.provider} ${best.offer.gpus_per_node}× ${best.offer.gpu_model}`));
    // The head: cheapest, fastest and best cost x time together, with deltas vs #1.
    const head = resp.head || {};
    const option = (label, o, cls) => o && o.offer_id ? stat(label,
      o.rank === 1 ? '#1' : `${o.rank ? '#' + o.rank + ' ' : ''}${o.offer_id} ×${o.nodes}: ` +
        `${usd(o.total_usd)}, ${hours(o.hours)} h (${o.delta_usd < 0 ? '−' : '+'}${usd(Math.abs(o.delta_usd))}, ` +
        `${o.delta_hours < 0 ? '−' : '+'}${hours(Math.abs(o.delta_hours))} h)`, cls) : null;
    summary.append(...[option('Cheapest', head.cheapest, 'head-cheapest'),
                       option('Fastest', head.fastest, 'head-fastest'),
                       option('Best cost × time', head.best_cost_time, 'head-cost-time')].filter(Boolean));
    if (head.why_first) summary.append(stat('Why #1', head.why_first, 'head-why'));
  }
  const excluded = resp.excluded.reduce((n, e) => n + e.count, 0);
  summary.append(stat('Candidates', `${resp.candidates_considered.toLocaleString('en-US')}`),
                 stat('Excluded', excluded.toLocaleString('en-US')));
  const reasons = resp.excluded.filter((e) => e.count > 0)
    .map((e) => `${e.reason.replace('EXCLUSION_REASON_', '').toLowerCase().replace(/_/g, ' ')} ${e.count}`);
  $('#excluded').textContent = reasons.length ? 'Excluded: ' + reasons.join(' · ') : '';
  // The oldest and newest price the answer uses, not one date for all.
  $('#versions').textContent = `catalog ${resp.catalog_version} · price book ${resp.price_book_version}` +
    (resp.oldest_price_as_of
      ? ` · prices used: oldest ${resp.oldest_price_as_of} (${age(resp.oldest_price_age_seconds)} old), newest ${resp.newest_price_as_of} (${age(resp.newest_price_age_seconds)} old)`
      : '');
  if (!recs.length) {
    summary.prepend(el('div', {class: 'stat'}, el('div', {class: 'label', text: 'Result'}),
                       el('div', {class: 'value', text: 'Nothing qualifies: loosen a constraint'})));
  }
}

// What-if alternatives, nearest misses and the defaults the service assumed.
function renderNotes(resp) {
  const notes = $('#notes');
  notes.replaceChildren();
  const card = (title, id, items) => {
    if (!items.length) return;
    notes.append(el('div', {class: 'card', id}, el('h2', {text: title}), el('ul', {}, ...items)));
  };
  const delta = (v, fmt) => el('span', {class: v <= 0 ? 'delta-good' : 'delta-bad', text: (v > 0 ? '+' : '') + fmt(v)});
  card('What if', 'what-if', (resp.what_if || []).map((w) => el('li', {},
    el('strong', {text: w.axis + ': '}), delta(w.delta_usd, usd), document.createTextNode(', '),
    delta(w.delta_hours, (h) => hours(h) + ' h'), document.createTextNode(' · ' + w.summary))));
  card('Nearest misses', 'nearest-misses', (resp.nearest_misses || []).map((m) => el('li', {text: m.summary})));
  card('Assumed for you', 'assumptions', (resp.assumptions || []).map((a) => el('li', {},
    el('code', {text: a.field}), document.createTextNode(` = ${a.value}${a.note ? ' (' + a.note + ')' : ''}`))));
}

// ---------- charts ----------
function colorFor(provider, providers) {
  return PROVIDER_COLORS[providers.indexOf(provider) % PROVIDER_COLORS.length];
}

function niceMax(v) {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function axes(svg, w, h, m, xMax, yMax, xLabel, yLabel, yFormat) {
  for (let i = 0; i <= 4; i++) {
    const y = m.t + (h - m.t - m.b) * (1 - i / 4);
    svg.append(svgEl('line', {class: 'gridline', x1: m.l, x2: w - m.r, y1: y, y2: y}));
    const t = svgEl('text', {x: m.l - 6, y: y + 4, 'text-anchor': 'end'});
    t.textContent = yFormat((yMax * i) / 4);
    svg.append(t);
  }
  if (xMax != null) {
    for (let i = 0; i <= 4; i++) {
      const x = m.l + (w - m.l - m.r) * (i / 4);
      const t = svgEl('text', {x, y: h - m.b + 16, 'text-anchor': 'middle'});
      t.textContent = hours((xMax * i) / 4);
      svg.append(t);
    }
  }
  svg.append(svgEl('line', {x1: m.l, x2: w - m.r, y1: h - m.b, y2: h - m.b, stroke: '#c0c6d0'}));
  const xl = svgEl('text', {x: (w + m.l - m.r) / 2, y: h - 4, 'text-anchor': 'middle'});
  xl.textContent = xLabel;
  const yl = svgEl('text', {x: 12, y: (h - m.b + m.t) / 2, transform: `rotate(-90 12 ${(h - m.b + m.t) / 2})`, 'text-anchor': 'middle'});
  yl.textContent = yLabel;
  svg.append(xl, yl);
}

function renderCostHours(recs) {
  const box = $('#chart-cost-hours');
  box.replaceChildren();
  if (!recs.length) return;
  const w = 560, h = 300, m = {l: 62, r: 16, t: 12, b: 44};
  const svg = svgEl('svg', {viewBox: `0 0 ${w} ${h}`, role: 'img', 'aria-label': 'Total cost against hours'});
  const xMax = niceMax(Math.max(...recs.map((r) => r.estimated_hours)) * 1.05);
  const yMax = niceMax(Math.max(...recs.map((r) => r.cost.total_usd)) * 1.05);
  axes(svg, w, h, m, xMax, yMax, 'estimated hours', 'total USD', (v) => usd(v));
  const providers = [...new Set(recs.map((r) => r.offer.provider))];
  for (const r of recs) {
    const cx = m.l + ((w - m.l - m.r) * r.estimated_hours) / xMax;
    const cy = h - m.b - ((h - m.t - m.b) * r.cost.total_usd) / yMax;
    const dot = svgEl('circle', {cx, cy, r: r.rank === 1 ? 7 : 5, fill: colorFor(r.offer.provider, providers),
                                 'data-rank': r.rank});
    const title = svgEl('title');
    title.textContent = `#${r.rank} ${r.offer.provider} ${r.offer.instance_type} (${purchaseName(r.purchase_option)}): ` +
                        `${hours(r.estimated_hours)} h, ${usd(r.cost.total_usd)}`;
    dot.append(title);
    svg.append(dot);
  }
  box.append(svg, legendFor(providers));
}

function legendFor(providers) {
  return el('div', {class: 'legend'}, ...providers.map((p) =>
    el('span', {}, el('i', {style: `background:${colorFor(p, providers)}`}), document.createTextNode(p))));
}

// Lowest USD per GPU-hour per GPU model, on-demand and spot.
function renderPriceByGpu(offers) {
  const box = $('#chart-price-gpu');
  box.replaceChildren();
  const best = new Map();
  for (const o of offers) {
    const gpus = o.gpus_per_node * Math.max(1, o.nodes);
    const cur = best.get(o.gpu_model) || {od: Infinity, spot: Infinity};
    if (o.on_demand_usd_per_hour > 0) cur.od = Math.min(cur.od, o.on_demand_usd_per_hour / gpus);
    if (o.spot_usd_per_hour > 0) cur.spot = Math.min(cur.spot, o.spot_usd_per_hour / gpus);
    best.set(o.gpu_model, cur);
  }
  const rows = [...best.entries()].filter(([, v]) => Number.isFinite(v.od) || Number.isFinite(v.spot))
    .sort((a, b) => (Number.isFinite(a[1].od) ? a[1].od : a[1].spot) - (Number.isFinite(b[1].od) ? b[1].od : b[1].spot));
  if (!rows.length) return;
  const rowH = 22, m = {l: 110, r: 60, t: 8, b: 30};
  const w = 560, h = m.t + m.b + rows.length * rowH;
  const svg = svgEl('svg', {viewBox: `0 0 ${w} ${h}`, role: 'img', 'aria-label': 'Price per GPU-hour by GPU'});
  const max = niceMax(Math.max(...rows.map(([, v]) => Math.max(Number.isFinite(v.od) ? v.od : 0, Number.isFinite(v.spot) ? v.spot : 0))));
  const x = (v) => m.l + ((w - m.l - m.r) * v) / max;
  for (let i = 0; i <= 4; i++) {
    const gx = x((max * i) / 4);
    svg.append(svgEl('line', {class: 'gridline', x1: gx, x2: gx, y1: m.t, y2: h - m.b}));
    const t = svgEl('text', {x: gx, y: h - m.b + 16, 'text-anchor': 'middle'});
    t.textContent = usd((max * i) / 4);
    svg.append(t);
  }
  rows.forEach(([gpu, v], i) => {
    const y = m.t + i * rowH;
    const label = svgEl('text', {x: m.l - 8, y: y + 15, 'text-anchor': 'end'});
    label.textContent = gpu;
    svg.append(label);
    if (Number.isFinite(v.od)) {
      svg.append(svgEl('rect', {x: m.l, y: y + 3, width: Math.max(1, x(v.od) - m.l), height: 8, fill: '#2457d6', rx: 2}));
    }
    if (Number.isFinite(v.spot)) {
      svg.append(svgEl('rect', {x: m.l, y: y + 12, width: Math.max(1, x(v.spot) - m.l), height: 7, fill: '#f79009', rx: 2}));
    }
    const value = svgEl('text', {x: x(Math.max(Number.isFinite(v.od) ? v.od : 0, Number.isFinite(v.spot) ? v.spot : 0)) + 6, y: y + 15});
    value.textContent = usd(Number.isFinite(v.od) ? v.od : v.spot);
    svg.append(value);
  });
  const axisLabel = svgEl('text', {x: (w + m.l - m.r) / 2, y: h - 4, 'text-anchor': 'middle'});
  axisLabel.textContent = 'USD per GPU-hour (blue on-demand, orange spot)';
  svg.append(axisLabel);
  box.append(svg);
}

// The catalog's offers for the price chart: /v1/offers when the gateway
// serves it (fetched once per page load), else the offers of the ranked answer.
let catalogCache = null;
async function catalogOffers(fallback) {
  if (!catalogCache) catalogCache = fetchCatalog();
  const {offers, whole} = await catalogCache;
  if (!whole) catalogCache = null;  // try again next time
  return offers.length ? {offers, whole, fromCatalog: true} : {offers: fallback, whole: false, fromCatalog: false};
}

async function fetchCatalog() {
  const all = [];
  let token = '';
  for (let page = 0; page < 20; page++) {
    const res = await api('GET', `/v1/offers?page_size=1000${token ? '&page_token=' + encodeURIComponent(token) : ''}`);
    if (!res.ok) break;
    all.push(...res.data.offers);
    token = res.data.next_page_token;
    if (!token) return {offers: all, whole: true};
  }
  return {offers: all, whole: false};
}

// ---------- compare ----------
async function compare(event) {
  event.preventDefault();
  const form = $('#workload-form');
  clearErrors(form);
  let request;
  try {
    request = buildRequest();
  } catch (e) {
    showError(form, {status: 'INVALID_ARGUMENT', message: e.message, field: e.field});
    return;
  }
  const button = $('#submit');
  button.disabled = true;
  button.textContent = 'Comparing…';
  try {
    const res = await api('POST', '/v1/recommend', request);
    if (!res.ok) {
      showError(form, errorOf(res));
      return;
    }
    lastRequest = request;
    remember(formParams(form));
    const resp = res.data;
    $('#results').hidden = false;
    $('#export-output').hidden = true;
    renderSummary(resp);
    renderNotes(resp);
    rankedRows = resp.recommendations.map(rowData);
    $$('#ranked th').forEach((h) => h.classList.remove('sorted-asc', 'sorted-desc'));
    $('#ranked th[data-key="rank"]').classList.add('sorted-asc');
    renderRanked();
    renderCostHours(resp.recommendations);
    const fallback = resp.recommendations.map((r) => r.offer);
    const {offers, whole, fromCatalog} = await catalogOffers(fallback);
    $('#price-hint').textContent = whole ? 'Lowest USD per GPU-hour of each GPU in the whole catalog.'
      : fromCatalog ? `Lowest USD per GPU-hour among the first ${offers.length.toLocaleString('en-US')} catalog offers.`
      : 'Lowest USD per GPU-hour among the ranked offers.';
    renderPriceByGpu(offers);
  } catch (e) {
    showError(form, {status: 'UNAVAILABLE', message: 'the gateway did not answer: ' + e.message});
  } finally {
    button.disabled = false;
    button.textContent = 'Compare offers';
  }
}

// Every file of the export, as the CLI's --export=F --export_alternative=N
// writes them: file 1 (rank 1's shape), then the others the
// X-Export-Alternatives header counts, each with its own download link.
async function exportFile(format, alternative) {
  const res = await fetch(`/v1/recommend?format=${format}&alternative=${alternative}`, {
    method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(lastRequest)});
  return {res, text: await res.text()};
}

async function showExport(event) {
  event.preventDefault();
  if (!lastRequest) return;
  const format = event.target.dataset.format;
  const out = $('#export-output');
  const first = await exportFile(format, 1);
  const count = first.res.ok ? Number(first.res.headers.get('X-Export-Alternatives') || 1) : 1;
  const files = [first.text];
  for (let n = 2; n <= count; n++) files.push((await exportFile(format, n)).text);
  const ext = format === 'karpenter' ? 'nodepools' : format;
  out.replaceChildren(...files.flatMap((text, i) => {
    const name = `${ext}-${i + 1}.yaml`;
    const link = el('a', {href: URL.createObjectURL(new Blob([text], {type: 'application/yaml'})),
                          download: name, text: `Download ${name}`});
    return [el('div', {class: 'export-head'},
               el('span', {text: `File ${i + 1} of ${files.length} ` +
                                 `(CLI: --export=${format} --export_alternative=${i + 1}) `}), link),
            el('pre', {class: 'export-file', 'data-alternative': String(i + 1), text})];
  }));
  out.hidden = false;
  out.scrollIntoView({behavior: 'smooth', block: 'nearest'});
}

// ---------- offers browser ----------
function renderOffers() {
  const tbody = $('#offers tbody');
  tbody.replaceChildren();
  for (const row of offersRows) {
    const o = row.offer;
    tbody.append(el('tr', {},
      el('td', {text: o.provider}),
      el('td', {class: 'instance', text: o.instance_type}),
      el('td', {text: o.region}),
      el('td', {text: o.gpu_model}),
      el('td', {class: 'num', text: String(o.gpus_per_node)}),
      el('td', {text: row.link}),
      el('td', {class: 'num', text: String(o.vcpus || '–')}),
      el('td', {class: 'num', text: o.ram_bytes > 0 ? gb(o.ram_bytes) : '–'}),
      el('td', {class: 'num price' + (row.flag ? ' flagged' : ''),
                'data-value': String(Number.isFinite(row.price) ? row.price : 0),
                title: row.flag ? `${row.flag}: never ranked on this price` : '',
                text: (Number.isFinite(row.price) ? usd(row.price) : '–') + (row.flag ? ' ⚑' : '')}),
      el('td', {class: 'num per-gpu', text: Number.isFinite(row.per_gpu) ? usd(row.per_gpu) : '–'}),
      el('td', {class: 'num other', text: row.other}),
    ));
  }
}

// The purchase option the offers browser prices with: the one filtered for,
// else on-demand (spot for an offer sold only as spot).
const PURCHASE_FIELDS = {on_demand: 'on_demand_usd_per_hour', spot: 'spot_usd_per_hour',
                         reserved: 'reserved_usd_per_hour'};
function offerPrice(o, purchase) {
  if (PURCHASE_FIELDS[purchase]) return o[PURCHASE_FIELDS[purchase]] || 0;
  return o.on_demand_usd_per_hour > 0 ? o.on_demand_usd_per_hour : o.spot_usd_per_hour || 0;
}
function syncOfferHeaders() {
  const purchase = $('#offer-purchase').value;
  const name = {on_demand: 'on-demand', spot: 'spot', reserved: 'reserved'}[purchase];
  $('#offers th[data-key="price"]').textContent = name ? `USD/h ${name}` : 'USD/h';
  $('#offers th[data-key="per_gpu"]').textContent = name ? `USD/GPU-h ${name}` : 'USD/GPU-h';
  $('#offers th[data-key="other_value"]').textContent = purchase === 'spot' ? 'On-demand USD/h' : 'Spot USD/h';
}

// The catalog's flag on the price shown (Offer.price_flags), if any.
function priceFlag(o, purchase) {
  const option = {on_demand: 'PURCHASE_OPTION_ON_DEMAND', spot: 'PURCHASE_OPTION_SPOT',
                  reserved: 'PURCHASE_OPTION_RESERVED'}[purchase] ||
                 (o.on_demand_usd_per_hour > 0 ? 'PURCHASE_OPTION_ON_DEMAND' : 'PURCHASE_OPTION_SPOT');
  const flag = (o.price_flags || []).find((f) => f.purchase_option === option);
  return flag ? flag.reason : '';
}

function offerRow(o, purchase) {
  const price = offerPrice(o, purchase);
  const other = purchase === 'spot' ? o.on_demand_usd_per_hour : o.spot_usd_per_hour;
  const link = (o.link || '').replace('LINK_TYPE_', '').replace('NONE', '—').replace('_', ' ');
  const fabric = (o.fabric || '').replace('FABRIC_TYPE_', '');
  return {
    offer: o, provider: o.provider, instance: o.instance_type, region: o.region, gpu: o.gpu_model,
    gpus: o.gpus_per_node,
    link: fabric && fabric !== 'NONE' && fabric !== 'UNSPECIFIED' ? `${link} + ${fabric}` : link,
    vcpus: o.vcpus || 0, ram: Number(o.ram_bytes) || 0,
    price: price > 0 ? price : Infinity,
    per_gpu: price > 0 ? price / o.gpus_per_node : Infinity,
    other: other > 0 ? usd(other) : '–', other_value: other || Infinity,
    flag: priceFlag(o, purchase),
  };
}

async function browseOffers(event, append = false) {
  if (event) event.preventDefault();
  const form = $('#offers-form');
  clearErrors(form);
  const params = new URLSearchParams();
  for (const input of $$('[name]', form)) {
    if (input.value.trim() !== '') params.set(input.name, input.value.trim());
  }
  params.set('page_size', '50');
  if (append && nextOffersToken) params.set('page_token', nextOffersToken);
  const shared = formParams(form);
  shared.set('tab', 'offers');
  remember(shared);
  const seq = ++offersSeq;
  const res = await api('GET', '/v1/offers?' + params.toString());
  if (seq !== offersSeq) return;
  if (!res.ok) {
    const error = errorOf(res);
    if (res.status === 404 && !error.field) error.message = 'this gateway does not serve the offer catalog over HTTP yet';
    showError(form, error);
    return;
  }
  const purchase = $('#offer-purchase').value;
  syncOfferHeaders();
  const rows = res.data.offers.map((o) => offerRow(o, purchase));
  offersRows = append ? offersRows.concat(rows) : rows;
  nextOffersToken = res.data.next_page_token;
  $('#offers-next').hidden = !nextOffersToken;
  $('#offers-count').textContent = `${offersRows.length} of ${res.data.total_size} offers`;
  renderOffers();
}

// ---------- CSV downloads ----------
function csvCell(v) {
  const t = v == null ? '' : String(v);
  return /[",\n\r]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
}
const toCsv = (rows) => rows.map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';

// The ranked table as the API returned it: raw numbers, not the rounded text.
function rankedCsv() {
  const header = ['rank', 'provider', 'instance_type', 'region', 'gpu_model', 'gpus_per_node', 'nodes',
                  'purchase_option', 'usd_per_hour', 'estimated_hours', 'total_usd', 'compute_usd', 'storage_usd',
                  'egress_usd', 'preemption_usd', 'memory_per_gpu_bytes', 'gpu_memory_bytes',
                  'time_to_first_token_seconds', 'tokens_per_second_per_user', 'usd_per_million_output_tokens',
                  'warnings', 'also_in_regions'];
  return toCsv([header, ...rankedRows.map(({rec: r}) => [
    r.rank, r.offer.provider, r.offer.instance_type, r.offer.region, r.offer.gpu_model, r.offer.gpus_per_node,
    r.offer.nodes, purchaseName(r.purchase_option), r.cost.usd_per_hour, r.estimated_hours, r.cost.total_usd,
    r.cost.compute_usd, r.cost.storage_usd, r.cost.egress_usd, r.cost.preemption_usd, r.memory.total_bytes,
    r.gpu_memory_bytes, isServing(r) ? r.serving.time_to_first_token_seconds : '',
    isServing(r) ? r.serving.tokens_per_second_per_user : '',
    isServing(r) ? r.serving.usd_per_million_output_tokens : '', r.warnings.join(' | '),
    (r.also_in_regions || []).join('; ')])]);
}

function offersCsv() {
  const purchase = $('#offer-purchase').value || 'default';
  const header = ['id', 'provider', 'instance_type', 'region', 'gpu_model', 'gpus_per_node', 'vcpus', 'ram_bytes',
                  'link', 'fabric', 'on_demand_usd_per_hour', 'spot_usd_per_hour', 'reserved_usd_per_hour',
                  `usd_per_hour_${purchase}`, `usd_per_gpu_hour_${purchase}`];
  return toCsv([header, ...offersRows.map(({offer: o, price, per_gpu: perGpu}) => [
    o.id, o.provider, o.instance_type, o.region, o.gpu_model, o.gpus_per_node, o.vcpus, o.ram_bytes, o.link, o.fabric,
    o.on_demand_usd_per_hour, o.spot_usd_per_hour, o.reserved_usd_per_hour,
    Number.isFinite(price) ? price : '', Number.isFinite(perGpu) ? perGpu : ''])]);
}

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], {type: 'text/csv'}));
  const a = el('a', {href: url, download: name});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// ---------- the question in the URL ----------
// The form's inputs that differ from the page's defaults, by name, so a link
// asks the same question: ?task=TASK_INFERENCE&preset=llama-3.1-8b&concurrent_sequences=64.
function formParams(form) {
  const params = new URLSearchParams();
  for (const input of $$('[name]', form)) {
    if (input.type === 'checkbox') {
      if (input.name === 'spot' ? spotTouched : input.checked !== input.defaultChecked) {
        params.set(input.name, input.checked ? '1' : '0');
      }
    } else if (input.tagName === 'SELECT') {
      const initial = [...input.options].find((o) => o.defaultSelected) || input.options[0];
      if (input.value !== (initial ? initial.value : '')) params.set(input.name, input.value);
    } else if (input.value !== input.defaultValue) {
      params.set(input.name, input.value);
    }
  }
  return params;
}

function fillForm(form, params) {
  let filled = false;
  for (const input of $$('[name]', form)) {
    if (!params.has(input.name)) continue;
    const value = params.get(input.name);
    if (input.type === 'checkbox') {
      input.checked = value === '1' || value === 'true';
      if (input.name === 'spot') spotTouched = true;
    } else {
      input.value = value;
    }
    filled = true;
  }
  return filled;
}

function remember(params) {
  const query = params.toString();
  history.replaceState(null, '', query ? '?' + query : location.pathname);
}

// ---------- set-up ----------
function syncTaskFields() {
  const task = $('#task').value;
  const training = TRAINING.has(task);
  $('.row.training').hidden = !training;
  $$('.row.serving').forEach((row) => { row.hidden = training; });
  $('.batch-only').hidden = task !== 'TASK_BATCH_INFERENCE';
  if (!spotTouched) $('#spot').checked = training;
}

function syncModelSource() {
  const hf = $('#model-source').value === 'hf';
  $('#hf-label').hidden = !hf;
  $('#preset-label').hidden = hf;
}

async function loadPresets() {
  const res = await api('GET', '/v1/models');
  if (!res.ok || !res.data.models) return;
  $('#preset-list').replaceChildren(...res.data.models.map((m) =>
    el('option', {value: m.preset || m.name, text: m.name || m.preset})));
}

function selectTab(name) {
  for (const tab of $$('.tab[data-tab]')) tab.classList.toggle('active', tab.dataset.tab === name);
  $('#panel-compare').hidden = name !== 'compare';
  $('#panel-offers').hidden = name !== 'offers';
  $('#panel-sources').hidden = name !== 'sources';
  if (name === 'offers' && !offersRows.length) browseOffers();
  if (name === 'sources') loadSources();
}

// ---------- price sources (GET /v1/sources) ----------
// "45 s", "12 min", "5 h", "3 days"; "never" for -1.
function age(seconds) {
  const s = Number(seconds);
  if (!(s >= 0)) return 'never';
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.floor(s / 60)} min`;
  if (s < 172800) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} days`;
}
const when = (unix) => (Number(unix) > 0 ? new Date(Number(unix) * 1000).toISOString().slice(0, 16).replace('T', ' ') : '–');

async function loadSources() {
  const res = await api('GET', '/v1/sources');
  const tbody = $('#sources tbody');
  tbody.replaceChildren();
  if (!res.ok || !res.data.sources) return;
  $('#sources-at').textContent = `ages at ${when(res.data.now_unix_seconds)} UTC`;
  for (const s of res.data.sources) {
    const rejected = (s.rows_rejected || []).map((r) => `${r.reason}: ${r.rows}`).join(', ');
    tbody.append(el('tr', {class: s.stale ? 'stale' : '', 'data-source': s.name},
      el('td', {class: 'instance', text: s.name}),
      el('td', {text: s.kind}),
      el('td', {text: s.reason ? `${s.result}: ${s.reason}` : s.result}),
      el('td', {class: 'num age', text: age(s.age_seconds) + (s.stale ? ' (stale)' : '')}),
      el('td', {class: 'num', text: Number(s.stale_after_seconds) > 0 ? age(s.stale_after_seconds) : '–'}),
      el('td', {class: 'nowrap', text: when(s.last_success_unix_seconds)}),
      el('td', {class: 'nowrap', text: when(s.last_attempt_unix_seconds)}),
      el('td', {class: 'num', text: String(s.offers || 0)}),
      el('td', {class: 'nowrap', text: s.oldest_as_of === s.newest_as_of ? (s.oldest_as_of || '–') : `${s.oldest_as_of} .. ${s.newest_as_of}`}),
      el('td', {text: s.kind === 'refresh' ? `${s.rows_read || 0} / ${s.rows_kept || 0}` : '–'}),
      el('td', {text: rejected})));
  }
}

function init() {
  $('#memory-legend').append(...MEMORY_PARTS.map(([cls, , label]) =>
    el('span', {}, el('i', {class: 'seg-' + cls}), document.createTextNode(label))));
  $('#workload-form').addEventListener('submit', compare);
  $('#task').addEventListener('change', syncTaskFields);
  $('#model-source').addEventListener('change', syncModelSource);
  $('#offers-form').addEventListener('submit', (e) => browseOffers(e));
  $('#offers-next').addEventListener('click', () => browseOffers(null, true));
  $$('.exports a').forEach((a) => a.addEventListener('click', showExport));
  $$('.tab[data-tab]').forEach((t) => t.addEventListener('click', () => selectTab(t.dataset.tab)));
  makeSortable($('#ranked'), () => rankedRows, renderRanked);
  makeSortable($('#offers'), () => offersRows, renderOffers);
  $('#spot').addEventListener('change', () => { spotTouched = true; });
  $('#offer-purchase').addEventListener('change', syncOfferHeaders);
  $('#ranked-csv').addEventListener('click', () => download('gpu-advisor-ranked.csv', rankedCsv()));
  $('#offers-csv').addEventListener('click', () => download('gpu-advisor-offers.csv', offersCsv()));
  // A shared link: the question in the URL, asked at once.
  const params = new URLSearchParams(location.search);
  const offersTab = params.get('tab') === 'offers';
  const asked = offersTab ? fillForm($('#offers-form'), params) : fillForm($('#workload-form'), params);
  syncTaskFields();
  syncModelSource();
  syncOfferHeaders();
  loadPresets();
  if (offersTab) selectTab('offers');
  else if (asked) $('#workload-form').requestSubmit();
}

document.addEventListener('DOMContentLoaded', init);
