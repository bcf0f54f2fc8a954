// The comparison page in headless Chromium (Debian's chromium, driven by npm
// playwright-core), against a live gateway:
//   node tests/http/web_test.js http://127.0.0.1:8080 [screenshot.png]
// Fills the form, submits, reads the ranked table, sorts it, checks the
// memory bars, cost breakdown and charts, renders a validation error from the
// service, and browses offers. Prints "N passed, M failed"; exits 1 on any
// failure.
'use strict';
const path = require('path');
const {chromium} = require(path.join(__dirname, '../tools/node_modules/playwright-core'));

const base = process.argv[2];
const screenshot = process.argv[3];
if (!base) {
  console.error('usage: web_test.js BASE_URL [SCREENSHOT.png]');
  process.exit(2);
}

let passed = 0;
let failed = 0;
function check(name, ok, detail = '') {
  if (ok) {
    passed++;
    console.log(`PASS  ${name}`);
  } else {
    failed++;
    console.log(`FAIL  ${name}${detail ? ': ' + detail : ''}`);
  }
}

const money = (text) => Number(text.replace(/[$,]/g, ''));

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({viewport: {width: 1440, height: 1100}});
  const consoleErrors = [];
  // Script errors only: the browser also logs every 4xx answer, which the
  // validation step provokes on purpose.
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  try {
    await page.goto(base + '/', {waitUntil: 'load'});
    check('page loads with the form', await page.isVisible('#workload-form'));

    // Fill the form: LoRA of a preset, 50M tokens, budget, spot allowed.
    await page.selectOption('#task', 'TASK_LORA');
    await page.fill('#preset', 'llama-3.1-8b');
    await page.fill('#train-tokens', '5e7');
    await page.fill('#sequence-length', '2048');
    await page.fill('#max-total', '500');
    await page.fill('#max-results', '8');
    await page.check('#spot');
    await page.click('#submit');
    await page.waitForSelector('#ranked tbody tr', {timeout: 20000});

    const rows = await page.$$eval('#ranked tbody tr', (trs) => trs.map((tr) => ({
      rank: Number(tr.querySelector('td.rank').textContent),
      total: tr.querySelector('td.total').textContent,
      bars: tr.querySelectorAll('.bar:not(.cost) span').length,
      cost: tr.querySelectorAll('.bar.cost span').length,
      costText: tr.querySelector('.bar.cost + .bar-caption').textContent,
    })));
    check('the ranked table has rows', rows.length > 1, `${rows.length} rows`);
    check('ranks are 1..n in order', rows.every((r, i) => r.rank === i + 1));
    const totals = rows.map((r) => money(r.total));
    check('totals ascend (cheapest objective) and stay within the 500 USD budget',
          totals.every((t, i) => i === 0 || totals[i - 1] <= t) && totals.every((t) => t <= 500), totals.join(' '));
    check('every row has a memory bar with segments', rows.every((r) => r.bars >= 2));
    check('every row has a cost breakdown', rows.every((r) => r.cost >= 1 && /compute \$/.test(r.costText)));
    check('summary names the best total', /\$/.test(await page.textContent('.stat.best .value')));
    const answer = await page.evaluate(async () => (await fetch('/v1/recommend', {method: 'POST', body: JSON.stringify({
      workload: {task: 'TASK_LORA', model: {preset: 'llama-3.1-8b'}, train_tokens: 5e7, sequence_length: 2048},
      constraints: {max_total_usd: 500, objective: 'OBJECTIVE_CHEAPEST', purchase_options: ['PURCHASE_OPTION_ON_DEMAND', 'PURCHASE_OPTION_SPOT']},
      max_results: 8})})).json());
    const shownAssumptions = await page.$$eval('#assumptions li', (li) => li.length);
    check('the defaults the service assumed are listed', shownAssumptions === (answer.assumptions || []).length,
          `${shownAssumptions} shown, ${(answer.assumptions || []).length} in the answer`);
    const shownWhatIf = await page.$$eval('#what-if li', (li) => li.length);
    check('what-if alternatives are listed', shownWhatIf === (answer.what_if || []).length,
          `${shownWhatIf} shown, ${(answer.what_if || []).length} in the answer`);
    const dots = await page.$$eval('#chart-cost-hours circle', (c) => c.length);
    check('cost-vs-hours chart has a point per candidate', dots === rows.length, `${dots} points`);
    await page.waitForSelector('#chart-price-gpu svg rect', {timeout: 10000});
    const bars = await page.$$eval('#chart-price-gpu rect', (r) => r.length);
    check('price-by-GPU chart has bars', bars > 0, `${bars} bars`);

    if (screenshot) {
      await page.waitForTimeout(200);
      const height = await page.evaluate(() => document.querySelector('.charts').getBoundingClientRect().bottom + 20);
      await page.screenshot({path: screenshot, fullPage: true, clip: {x: 0, y: 0, width: 1440, height: Math.ceil(height)}});
    }

    // Sort by total, descending (two clicks: ascending, then descending).
    await page.click('#ranked th[data-key="total"]');
    await page.click('#ranked th[data-key="total"]');
    const sorted = await page.$$eval('#ranked tbody td.total', (tds) => tds.map((td) => td.textContent));
    const desc = sorted.map(money);
    check('clicking Total twice sorts descending', desc.every((t, i) => i === 0 || desc[i - 1] >= t), desc.join(' '));
    check('header shows the sort direction',
          await page.$eval('#ranked th[data-key="total"]', (th) => th.classList.contains('sorted-desc')));
    await page.click('#ranked th[data-key="provider"]');
    const providers = await page.$$eval('#ranked tbody tr td:nth-child(2) div:first-child', (d) => d.map((x) => x.textContent));
    check('sorting by provider is alphabetical',
          providers.every((p, i) => i === 0 || providers[i - 1].localeCompare(p) <= 0), providers.join(','));

    // Export from the page.
    await page.click('.exports a[data-format="skypilot"]');
    await page.waitForFunction(() => document.querySelector('#export-output').textContent.includes('ordered:'));
    check('SkyPilot export shown', true);

    // A validation error from the service, rendered on the field it names:
    // an unknown provider, which the gateway rejects listing the closest.
    await page.fill('#providers', 'awz');
    await page.click('#submit');
    await page.waitForSelector('#form-error:not([hidden])', {timeout: 10000});
    const banner = await page.textContent('#form-error');
    check('the error banner shows the gRPC code and message',
          /INVALID_ARGUMENT/.test(banner) && /constraints\.providers\[0\]/.test(banner), banner);
    const marked = await page.$eval('#providers', (i) => i.closest('label').classList.contains('invalid'));
    check('the field the service named is highlighted', marked);
    const fieldMessage = await page.textContent('label.invalid .field-error');
    check('the field shows its message', /unknown provider "awz"/.test(fieldMessage) && /aws/.test(fieldMessage), fieldMessage);
    if (screenshot) await page.screenshot({path: screenshot.replace(/\.png$/, '-error.png'), clip: {x: 0, y: 0, width: 1440, height: 520}});
    await page.fill('#providers', '');

    // A Hugging Face config.json instead of a preset.
    await page.selectOption('#model-source', 'hf');
    await page.fill('#hf-config', JSON.stringify({
      _name_or_path: 'example/llama-like-1b', hidden_size: 2048, num_hidden_layers: 16, num_attention_heads: 32,
      num_key_value_heads: 8, intermediate_size: 8192, vocab_size: 128256, max_position_embeddings: 8192}));
    await page.click('#submit');
    await page.waitForFunction(() => document.querySelector('#form-error').hidden &&
                                     document.querySelectorAll('#ranked tbody tr').length > 0, null, {timeout: 20000});
    check('a pasted config.json is sized and ranked', true);

    // Offers browser, when the gateway serves the catalog.
    const offersServed = (await page.evaluate(async () => (await fetch('/v1/offers?page_size=1')).status)) === 200;
    await page.click('#tab-offers');
    if (offersServed) {
      await page.waitForFunction(() => document.querySelectorAll('#offers tbody tr').length > 0, null, {timeout: 10000});
      const unfiltered = await page.$$eval('#offers tbody tr', (trs) => trs.length);
      check('offers browser lists the catalog', unfiltered > 0, `${unfiltered} rows`);
      await page.fill('#offer-gpu', 'H100');
      await page.click('#offers-form button[type="submit"]');
      await page.waitForFunction(() => {
        const cells = [...document.querySelectorAll('#offers tbody tr td:nth-child(4)')];
        return cells.length > 0 && cells.every((td) => td.textContent.startsWith('H100'));
      }, null, {timeout: 10000}).catch(() => {});
      const gpus = await page.$$eval('#offers tbody tr td:nth-child(4)', (tds) => tds.map((td) => td.textContent));
      check('offers browser filters by GPU', gpus.length > 0 && gpus.every((g) => g.startsWith('H100')), gpus.join(','));
    } else {
      await page.waitForSelector('#offers-error:not([hidden])', {timeout: 10000});
      check('offers browser says the catalog is not served yet', true);
    }
    if (screenshot) await page.screenshot({path: screenshot.replace(/\.png$/, '-offers.png'), fullPage: false});
    check('no JavaScript errors', consoleErrors.length === 0, consoleErrors.join(' | '));
  } finally {
    await browser.close();
  }
}

main()
  .catch((e) => { failed++; console.log(`FAIL  browser run: ${e.message}`); })
  .finally(() => {
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  });
