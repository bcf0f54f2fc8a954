// The comparison page in headless Chromium (Debian's chromium, driven by npm
// playwright-core), against a live gateway:
//   node tests/http/web_test.js http://127.0.0.1:8080 [screenshot.png]
// With a screenshot path, it also writes the page at desktop (1440 px) and
// phone (390 px) width next to it (-desktop-*.png, -phone-*.png).
// Fills the form, submits, reads the ranked table, sorts it, checks the
// memory bars, cost breakdown and charts, renders a validation error from the
// service, and browses offers. Prints "N passed, M failed"; exits 1 on any
// failure.
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const {execFileSync} = require('child_process');
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

// The ranked table within a 1440 px wide window: its scrolling container has
// nothing to scroll sideways, the table ends inside the viewport, and the page

// The page's export links give the CLI's --export files, every one of a
// multi-file export, byte for byte ($GPUADVISOR_CLI against $GATEWAY_ADDR, as
// web_test.sh sets them). The request is the set's multi-node pretrain, whose
// fallbacks differ in node count.
async function exportsAreTheClisFiles(page) {
  const cli = process.env.GPUADVISOR_CLI;
  const gateway = process.env.GATEWAY_ADDR;
  if (!cli || !gateway) {
    check('export files compared with the CLI', false, 'GPUADVISOR_CLI and GATEWAY_ADDR unset');
    return;
  }
  const set = JSON.parse(fs.readFileSync(path.join(__dirname, 'export_requests.json'), 'utf8'));
  const request = set.requests['pretrain-70b-multinode'];
  const requestFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'web-export-')), 'request.json');
  fs.writeFileSync(requestFile, JSON.stringify(request));
  await page.evaluate((r) => { lastRequest = r; }, request);
  let most = 0;
  for (const format of ['skypilot', 'dstack', 'karpenter']) {
    // Empty first: the earlier click's file would satisfy the wait below.
    await page.evaluate(() => document.querySelector('#export-output').replaceChildren());
    await page.click(`.exports a[data-format="${format}"]`);
    await page.waitForFunction((f) => document.querySelector('#export-output').textContent
      .includes(`--export=${f} `), format, {timeout: 20000});
    const files = await page.$$eval('#export-output pre.export-file', (ps) => ps.map((p) => p.textContent));
    const links = await page.$$eval('#export-output a[download]', (as) => as.length);
    check(`${format}: a download link per file`, links === files.length && files.length > 0, `${links}/${files.length}`);
    most = Math.max(most, files.length);
    files.forEach((text, i) => {
      const args = ['--gateway', gateway, 'recommend', `--request_file=${requestFile}`,
                    `--export=${format}`, `--export_alternative=${i + 1}`];
      let want = '';
      try { want = execFileSync(cli, args, {encoding: 'utf8'}); } catch (e) { want = `CLI failed: ${e.message}`; }
      check(`${format} file ${i + 1} of ${files.length} is the CLI's byte for byte`, text === want,
            `page ${text.length} bytes, CLI ${want.length}`);
    });
  }
  check('an export of several files shows them all', most > 1, `at most ${most} file(s)`);
}

// itself does not scroll sideways either.
async function rankedTableWidth(page) {
  return page.evaluate(() => {
    const table = document.querySelector('#ranked');
    const wrap = table.closest('.table-wrap');
    // The narrowest the table can get (every cell wrapped where it may), as a margin to report.
    table.style.width = 'min-content';
    const narrowest = table.offsetWidth;
    table.style.width = '';
    return {narrowest, scroll: wrap.scrollWidth, client: wrap.clientWidth, right: table.getBoundingClientRect().right,
            viewport: window.innerWidth, page: document.documentElement.scrollWidth,
            columns: [...table.querySelectorAll('thead th')].filter((th) => !th.hidden).length};
  });
}
function checkFits(name, m) {
  const detail = `table ${m.scroll} px wide in a ${m.client} px container, ends at ${Math.round(m.right)} px; ` +
                 `page ${m.page} px; ${m.columns} columns, ${m.narrowest} px at the narrowest`;
  check(name, m.viewport === 1440 && m.scroll <= m.client && m.right <= m.viewport && m.page <= m.viewport, detail);
  console.log(`      ${detail}`);
}

// The page as people share and use it: CLI suffixes, the API's defaults, the
// question in the URL, CSV downloads, the offers browser at the purchase option
// chosen, a compact serving view, and a phone-width layout.
// RFC 4180 rows (quoted fields may hold commas, quotes and line breaks).
function parseCsv(text) {
  const rows = [];
  let row = [], field = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; } else if (c !== '\r') field += c;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  return rows;
}

// The choice controls: host tier, host reliability, one row per instance type.
async function choiceChecks(page, sentBodies) {
  const submit = async () => {
    const before = sentBodies.length;
    await page.click('#submit');
    await page.waitForFunction((n) => document.querySelectorAll('#ranked tbody tr[data-rank]').length > 0, null, {timeout: 60000});
    await page.waitForFunction(() => !document.querySelector('#submit').disabled, null, {timeout: 60000});
    return sentBodies.length > before ? sentBodies[sentBodies.length - 1] : {};
  };
  const providers = () => page.$$eval('#ranked tbody tr[data-rank] td:nth-child(2) div:first-child', (d) => d.map((x) => x.textContent));
  await page.selectOption('#task', 'TASK_LORA');
  await page.fill('#exclude-providers', '');
  await page.fill('#providers', 'lambda');
  let sent = await submit();
  const alsoIn = await page.$$eval('#ranked .also-in', (d) => d.map((x) => x.textContent));
  check('one row per instance type: a grouped row says how many more regions sell it alike',
        alsoIn.length > 0 && alsoIn.every((t) => /^\+\d+ more regions?$/.test(t)) &&
        !('group_regions' in (sent.constraints || {})), alsoIn.join(','));
  await page.uncheck('#group-regions');
  sent = await submit();
  check('unticking "One row per instance type" sends group_regions false: a row per region',
        sent.constraints && sent.constraints.group_regions === false &&
        (await page.$$('#ranked .also-in')).length === 0 &&
        new URL(page.url()).searchParams.get('group_regions') === '0', JSON.stringify(sent.constraints));
  await page.check('#group-regions');
  await page.fill('#providers', '');
  await page.selectOption('#host-tier', 'community');
  await page.fill('#min-host-reliability', '0.98');
  sent = await submit();
  const market = await providers();
  check('"Hosts: community" and a minimum reliability are sent; only marketplace hosts are ranked',
        sent.constraints && sent.constraints.host_tier === 'community' && sent.constraints.min_host_reliability === 0.98 &&
        market.length > 0 && market.every((p) => p === 'vast' || p === 'runpod') &&
        new URL(page.url()).searchParams.get('host_tier') === 'community', `${JSON.stringify(sent.constraints)} ${market.join(',')}`);
  await page.selectOption('#host-tier', '');
  await page.fill('#min-host-reliability', '');
}

async function dailyUseChecks(browser, screenshot, errors) {
  const shot = (name) => (screenshot ? screenshot.replace(/\.png$/, `-${name}.png`) : null);
  const desktop = await browser.newPage({viewport: {width: 1440, height: 1000}, acceptDownloads: true});
  desktop.on('pageerror', (e) => errors.push(e.message));
  const sentBodies = [];
  desktop.on('request', (r) => { if (r.url().endsWith('/v1/recommend') && r.method() === 'POST') sentBodies.push(r.postDataJSON()); });
  await desktop.goto(base + '/', {waitUntil: 'load'});

  // Defaults as the API's: spot for training, not for an endpoint or a batch job.
  check('"Allow spot" is ticked for a training task (the API offers spot to restartable jobs)',
        await desktop.isChecked('#spot'));
  await desktop.selectOption('#task', 'TASK_INFERENCE');
  check('"Allow spot" is not ticked for an endpoint (the API\'s default is on-demand)', !(await desktop.isChecked('#spot')));
  await desktop.selectOption('#task', 'TASK_BATCH_INFERENCE');
  check('"Allow spot" is not ticked for batch inference', !(await desktop.isChecked('#spot')));
  await desktop.selectOption('#task', 'TASK_LORA');

  // CLI suffixes: 50M tokens, 2K... are numbers to the page.
  await desktop.fill('#train-tokens', '60M');
  await desktop.fill('#sequence-length', '2048');
  await desktop.fill('#max-hourly', '1.5K');
  await desktop.fill('#max-results', '6');
  await desktop.click('#submit');
  await desktop.waitForSelector('#ranked tbody tr[data-rank]', {timeout: 60000});
  const first = sentBodies[sentBodies.length - 1] || {};
  check('"60M" tokens and "1.5K" USD/h are sent as 6e7 and 1500',
        first.workload && first.workload.train_tokens === 6e7 && first.constraints.max_usd_per_hour === 1500,
        JSON.stringify(first));
  check('spot untouched: purchase options left to the service, which states them under Assumed',
        first.constraints && !('purchase_options' in first.constraints) &&
        (await desktop.textContent('#assumptions')).includes('constraints.purchase_options'));

  // The question in the URL: a new page with it asks it again, same answer.
  const url = desktop.url();
  const query = new URL(url).searchParams;
  check('the URL holds the question', query.get('train_tokens') === '60M' && query.get('max_usd_per_hour') === '1.5K' &&
        query.get('max_results') === '6', url);
  const totals = await desktop.$$eval('#ranked tbody td.total > div:first-child', (tds) => tds.map((td) => td.textContent));
  const shared = await browser.newPage({viewport: {width: 1440, height: 1000}});
  await shared.goto(url, {waitUntil: 'load'});
  await shared.waitForSelector('#ranked tbody tr[data-rank]', {timeout: 60000});
  const sharedTotals = await shared.$$eval('#ranked tbody td.total > div:first-child', (tds) => tds.map((td) => td.textContent));
  check('a shared link fills the form and shows the same answer',
        (await shared.inputValue('#train-tokens')) === '60M' && sharedTotals.join() === totals.join() && totals.length > 0,
        `${sharedTotals.join(' ')} vs ${totals.join(' ')}`);
  await shared.close();

  // CSV of the ranked table: one line per row, the API's numbers.
  const [rankedDownload] = await Promise.all([desktop.waitForEvent('download'), desktop.click('#ranked-csv')]);
  const rankedCsv = parseCsv(fs.readFileSync(await rankedDownload.path(), 'utf8'));
  const header = rankedCsv[0];
  const totalAt = header.indexOf('total_usd');
  check('ranked CSV: a header and one line per ranked offer, totals as shown',
        rankedDownload.suggestedFilename() === 'gpu-advisor-ranked.csv' && rankedCsv.length === totals.length + 1 &&
        totalAt > 0 && rankedCsv.slice(1).every((row, i) => row.length === header.length && Math.abs(Number(row[totalAt]) - money(totals[i])) < 0.01),
        rankedCsv.slice(0, 2).map((r) => r.join(',')).join(' / '));
  if (screenshot) await desktop.screenshot({path: shot('desktop-training'), fullPage: true});

  // Offers browser: the price of the purchase option selected.
  await desktop.click('#tab-offers');
  await desktop.waitForSelector('#offers tbody tr', {timeout: 10000});
  await desktop.selectOption('#offer-purchase', 'spot');
  await desktop.click('#offers-form button[type="submit"]');
  await desktop.waitForFunction(() => document.querySelector('#offers th[data-key="price"]').textContent.includes('spot') &&
                                      new URL(location.href).searchParams.get('purchase_option') === 'spot', null, {timeout: 10000});
  await desktop.waitForTimeout(300);
  const api = await desktop.evaluate(async () => (await fetch('/v1/offers?purchase_option=spot&page_size=50')).json());
  const prices = await desktop.$$eval('#offers tbody td.price', (tds) => tds.map((td) => Number(td.dataset.value)));
  check('offers sold as spot show their spot price per hour and per GPU-hour',
        prices.length > 0 && prices.length === api.offers.length &&
        api.offers.every((o, i) => o.spot_usd_per_hour > 0 && prices[i] === o.spot_usd_per_hour),
        `${prices.slice(0, 4).join(' ')} vs ${api.offers.slice(0, 4).map((o) => o.spot_usd_per_hour).join(' ')}`);
  const [offersDownload] = await Promise.all([desktop.waitForEvent('download'), desktop.click('#offers-csv')]);
  const offersCsv = parseCsv(fs.readFileSync(await offersDownload.path(), 'utf8'));
  const spotAt = offersCsv[0].indexOf('usd_per_hour_spot');
  check('offers CSV: one line per listed offer with the spot price column',
        offersCsv.length === prices.length + 1 && spotAt > 0 &&
        offersCsv.slice(1).every((row, i) => Number(row[spotAt]) === prices[i]), offersCsv[0].join(','));
  // A price the catalog flags (AWS p3 spot, 88% below on-demand) is marked.
  await desktop.fill('#offer-providers', 'aws');
  await desktop.fill('#offer-gpu', 'V100');
  await desktop.click('#offers-form button[type="submit"]');
  await desktop.waitForFunction(() => new URL(location.href).searchParams.get('providers') === 'aws', null, {timeout: 10000});
  await desktop.waitForTimeout(300);
  const flagged = await desktop.$$eval('#offers tbody td.price.flagged', (tds) => tds.map((td) => td.title));
  check('offers mark a flagged spot price and say why', flagged.length > 0 && flagged.every((t) => /likely stale/.test(t)),
        flagged.join(' | '));
  await desktop.fill('#offer-providers', '');
  await desktop.fill('#offer-gpu', '');
  // Price sources: one row per source, with its age; the 2024 TPU prices stale.
  await desktop.click('#tab-sources');
  await desktop.waitForSelector('#sources tbody tr', {timeout: 10000});
  const sources = await desktop.$$eval('#sources tbody tr', (trs) => trs.map((tr) => ({
    name: tr.dataset.source, stale: tr.classList.contains('stale'), age: tr.querySelector('td.age').textContent})));
  check('the Sources tab lists each price source with its age',
        sources.length > 5 && sources.some((x) => x.name === 'C-AWS' && !x.stale && /days/.test(x.age)) &&
        sources.some((x) => x.name === 'C-TPU' && x.stale), JSON.stringify(sources.slice(0, 3)));
  await desktop.click('#tab-offers');
  const offersUrl = desktop.url();
  check('the offers filters are in the URL too', new URL(offersUrl).searchParams.get('tab') === 'offers', offersUrl);
  if (screenshot) await desktop.screenshot({path: shot('desktop-offers'), fullPage: false});

  // A serving answer stays compact: one line per offer, numbers folded.
  await desktop.click('#tab-compare');
  await desktop.selectOption('#task', 'TASK_INFERENCE');
  await desktop.fill('#max-hourly', '');
  await desktop.fill('#concurrency', '32');
  await desktop.fill('#context-length', '8K');
  await desktop.fill('#max-results', '10');
  await desktop.fill('#exclude-providers', 'vast');
  await desktop.click('#submit');
  await desktop.waitForFunction(() => document.querySelectorAll('#ranked tr.serving-row').length > 0, null, {timeout: 60000});
  const serving = await desktop.evaluate(() => ({
    rows: document.querySelectorAll('#ranked tr.serving-row').length,
    closed: [...document.querySelectorAll('#ranked details.serving-detail')].every((d) => !d.open),
    height: document.querySelector('#ranked').getBoundingClientRect().height,
    page: document.documentElement.scrollHeight,
  }));
  check('a serving answer is compact: every offer\'s numbers folded, the table under 1,500 px for 10 offers',
        serving.rows > 0 && serving.closed && serving.height < 1500, JSON.stringify(serving));
  const servingSent = sentBodies[sentBodies.length - 1] || {};
  const servingProviders = await desktop.$$eval('#ranked tbody tr[data-rank] td:nth-child(2) div:first-child', (d) => d.map((x) => x.textContent));
  check('"Exclude providers" is sent and its provider is left out',
        JSON.stringify(servingSent.constraints && servingSent.constraints.exclude_providers) === '["vast"]' &&
        servingProviders.length > 0 && !servingProviders.includes('vast'), servingProviders.join(','));
  check('"8K" context is 8000 tokens, as the CLI reads it', servingSent.workload && servingSent.workload.context_length === 8000,
        JSON.stringify(servingSent.workload));
  await desktop.click('#ranked details.serving-detail summary');
  check('a folded serving row opens on click', await desktop.$eval('#ranked details.serving-detail', (d) => d.open));
  if (screenshot) await desktop.screenshot({path: shot('desktop-serving'), fullPage: true});
  const servingUrl = desktop.url();
  check('an endpoint keeps to datacenter hosts by default, stated under Assumed',
        !('host_tier' in (servingSent.constraints || {})) &&
        (await desktop.textContent('#assumptions')).includes('constraints.host_tier'));
  await choiceChecks(desktop, sentBodies);
  await desktop.close();

  // Phone width: nothing wider than the screen; wide tables scroll in their card.
  const phone = await browser.newPage({viewport: {width: 390, height: 844}, isMobile: true, hasTouch: true});
  phone.on('pageerror', (e) => errors.push(e.message));
  await phone.goto(base + '/', {waitUntil: 'load'});
  const fits = () => phone.evaluate(() => {
    const over = [...document.querySelectorAll('input, select, textarea, button, .card, .stat')]
      .filter((n) => n.offsetParent !== null && !n.closest('.table-wrap'))
      .filter((n) => n.getBoundingClientRect().right > window.innerWidth + 0.5)
      .map((n) => n.id || n.className || n.tagName);
    return {page: document.documentElement.scrollWidth, viewport: window.innerWidth, over};
  });
  let m = await fits();
  check('at 390 px the form fits the screen', m.page <= 390 && m.over.length === 0, JSON.stringify(m));
  if (screenshot) await phone.screenshot({path: shot('phone-form'), fullPage: true});
  await phone.goto(servingUrl, {waitUntil: 'load'});
  await phone.waitForFunction(() => document.querySelectorAll('#ranked tr.serving-row').length > 0, null, {timeout: 60000});
  m = await fits();
  check('at 390 px a serving answer fits the screen (tables scroll inside their card)',
        m.page <= 390 && m.over.length === 0, JSON.stringify(m));
  if (screenshot) {
    await phone.$eval('#results', (e) => e.scrollIntoView());
    await phone.screenshot({path: shot('phone-serving'), fullPage: false});
  }
  await phone.close();
  if (screenshot) console.log(`      screenshots: ${['desktop-training', 'desktop-offers', 'desktop-serving', 'phone-form', 'phone-serving'].map(shot).join(' ')}`);
}

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
    await page.waitForSelector('#ranked tbody tr', {timeout: 60000});

    const rows = await page.$$eval('#ranked tbody tr[data-rank]', (trs) => trs.map((tr) => ({
      rank: Number(tr.querySelector('td.rank').textContent),
      total: tr.querySelector('td.total > div:first-child').textContent,
      bars: tr.querySelectorAll('.bar:not(.cost) span').length,
      cost: tr.querySelectorAll('.bar.cost span').length,
      costText: tr.querySelector('.bar.cost + .bar-caption').textContent,
    })));
    check('the ranked table has rows', rows.length > 1, `${rows.length} rows`);
    check('ranks are 1..n in order', rows.every((r, i) => r.rank === i + 1));
    const totals = rows.map((r) => money(r.total));
    check('totals stay within the 500 USD budget', totals.every((t) => t <= 500), totals.join(' '));
    check('every row has a memory bar with segments', rows.every((r) => r.bars >= 2));
    check('every row has a cost breakdown', rows.every((r) => r.cost >= 1 && /compute \$/.test(r.costText)));
    check('summary names the best total', /\$/.test(await page.textContent('.stat.best .value')));
    // Every price says where it comes from and how old it is; the footer the
    // oldest and newest price used, not one date for all.
    const ages = await page.$$eval('#ranked tbody tr[data-rank] .price-age', (d) => d.map((x) => x.dataset.source));
    check('every ranked row names its price source and age', ages.length === rows.length && ages.every((a) => a),
          ages.join(','));
    check('the footer states the oldest and newest price used',
          /prices used: oldest 20\d\d-\d\d-\d\d.*newest 20\d\d-\d\d-\d\d/.test(await page.textContent('#versions')),
          await page.textContent('#versions'));
    checkFits('the ranked table (training) fits a 1440 px window without scrolling sideways', await rankedTableWidth(page));
    const answer = await page.evaluate(async () => (await fetch('/v1/recommend', {method: 'POST', body: JSON.stringify({
      workload: {task: 'TASK_LORA', model: {preset: 'llama-3.1-8b'}, train_tokens: 5e7, sequence_length: 2048},
      // "Allow spot" left as the API's default for training: the page sends no
      // purchase_options and the service states its choice.
      constraints: {max_total_usd: 500, objective: 'OBJECTIVE_CHEAPEST'},
      max_results: 8})})).json());
    // Cheapest under the tie rule (docs/gateway.md): totals within the answer's
    // tie band are a tie, ranked by time; a later row is never cheaper than an
    // earlier one by more than the band.
    const band = answer.tie_band_fraction || 0;
    check(`totals ascend under the cheapest objective's tie band (${band})`,
          totals.every((t, i) => totals.slice(0, i).every((e) => t >= e * (1 - band) - 0.01)), totals.join(' '));
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
    const sorted = await page.$$eval('#ranked tbody td.total > div:first-child', (tds) => tds.map((td) => td.textContent));
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
    await exportsAreTheClisFiles(page);

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
                                     document.querySelectorAll('#ranked tbody tr').length > 0, null, {timeout: 60000});
    check('a pasted config.json is sized and ranked', true);
    check('a training answer shows no serving columns or numbers',
          await page.$eval('#ranked th[data-key="ttft"]', (th) => th.hidden) &&
          (await page.$$eval('#ranked tr.serving-row', (trs) => trs.length)) === 0);

    // A serving endpoint with its load, SLOs and egress: the page's numbers
    // must be the JSON API's for the same request, whatever they are.
    await page.selectOption('#model-source', 'preset');
    await page.fill('#preset', 'llama-3.1-8b');
    await page.selectOption('#task', 'TASK_INFERENCE');
    check('serving inputs appear for an endpoint',
          await page.isVisible('#prompt-tokens') && await page.isVisible('#max-ttft') &&
          await page.isVisible('#min-user-tps') && !(await page.isVisible('#train-tokens')));
    const servingForm = {'#concurrency': '24', '#context-length': '4096', '#prompt-tokens': '1500',
                         '#output-tokens': '400', '#max-ttft': '2', '#min-user-tps': '15', '#egress': '50',
                         '#max-total': '', '#max-results': '5'};
    for (const [sel, value] of Object.entries(servingForm)) await page.fill(sel, value);
    await page.uncheck('#spot');
    const sent = [];
    const onRequest = (r) => { if (r.url().endsWith('/v1/recommend') && r.method() === 'POST') sent.push(r.postDataJSON()); };
    page.on('request', onRequest);
    await page.click('#submit');
    await page.waitForFunction(() => document.querySelectorAll('#ranked tr.serving-row').length > 0, null, {timeout: 60000});
    page.off('request', onRequest);
    const expectedRequest = {
      workload: {task: 'TASK_INFERENCE', model: {preset: 'llama-3.1-8b'}, context_length: 4096, concurrent_sequences: 24,
                 prompt_tokens: 1500, output_tokens: 400, egress_gb: 50},
      constraints: {objective: 'OBJECTIVE_CHEAPEST', max_time_to_first_token_seconds: 2, min_user_tokens_per_second: 15,
                    purchase_options: ['PURCHASE_OPTION_ON_DEMAND']},
      max_results: 5};
    const req = sent[sent.length - 1] || {};
    check('the page sends the serving load, SLOs and egress',
          req.workload && req.workload.prompt_tokens === 1500 && req.workload.output_tokens === 400 &&
          req.workload.concurrent_sequences === 24 && req.workload.context_length === 4096 && req.workload.egress_gb === 50 &&
          req.constraints.max_time_to_first_token_seconds === 2 && req.constraints.min_user_tokens_per_second === 15,
          JSON.stringify(req));
    const served = await page.evaluate(async (body) => (await fetch('/v1/recommend', {method: 'POST', body: JSON.stringify(body)})).json(),
                                       expectedRequest);
    const recs = served.recommendations || [];
    check('the JSON API answers the serving request with serving numbers',
          recs.length > 0 && recs.every((r) => r.serving && r.serving.replicas > 0), `${recs.length} recommendations`);
    const shown = await page.$$eval('#ranked tr.serving-row', (trs) => trs.map((tr) => ({
      rank: Number(tr.dataset.servingRank),
      values: Object.fromEntries([...tr.querySelectorAll('dd[data-key]')].map((dd) => [dd.dataset.key, {value: Number(dd.dataset.value), text: dd.textContent}])),
      intervals: Object.fromEntries([...tr.querySelectorAll('dd[data-interval]')].map((dd) => [dd.dataset.interval, [Number(dd.dataset.p10), Number(dd.dataset.p90)]])),
      bound: (tr.querySelector('.bound') || {}).dataset ? tr.querySelector('.bound').dataset.bound : '',
      sentence: (tr.querySelector('.bound-sentence') || {textContent: ''}).textContent,
    })));
    const totalsShown = await page.$$eval('#ranked tbody tr[data-rank] td.total > div:first-child', (tds) => tds.map((td) => td.textContent));
    check('a serving row per recommendation', shown.length === recs.length && totalsShown.length === recs.length,
          `${shown.length} serving rows, ${totalsShown.length} ranked, ${recs.length} in the answer`);
    const keys = ['time_to_first_token_seconds', 'inter_token_latency_seconds', 'tokens_per_second_per_user',
                  'decode_tokens_per_second_per_user', 'aggregate_tokens_per_second', 'requests_per_second',
                  'concurrent_sequences', 'replicas', 'usd_per_million_output_tokens', 'prefill_fraction',
                  'max_concurrency_per_replica', 'kv_cache_capacity_tokens_per_replica'];
    const mismatches = [];
    shown.forEach((row, i) => {
      const api = recs[i];
      if (!api || row.rank !== api.rank) { mismatches.push(`row ${i}: rank ${row.rank}`); return; }
      for (const key of keys) {
        const want = Number(api.serving[key] || 0);
        const got = row.values[key];
        if (!got || got.value !== want) { mismatches.push(`#${row.rank} ${key}: ${got && got.value} != ${want}`); continue; }
        // The visible text is the same number, rounded (ms and % scaled).
        const scale = key === 'inter_token_latency_seconds' ? 1000 : key === 'prefill_fraction' ? 100 : 1;
        const text = Number(got.text.replace(/[^0-9.]/g, ''));
        const digits = (got.text.split(' ')[0].split('.')[1] || '').length;
        if (Math.abs(text - want * scale) > 0.5 * Math.pow(10, -digits) + 1e-9) mismatches.push(`#${row.rank} ${key} text ${got.text} != ${want}`);
      }
      for (const key of ['time_to_first_token_interval', 'tokens_per_second_interval']) {
        const want = api[key];
        const got = row.intervals[key];
        if (!want || !(want.p50 > 0)) { mismatches.push(`#${row.rank} ${key}: missing from the answer`); continue; }
        if (!got || got[0] !== want.p10 || got[1] !== want.p90) mismatches.push(`#${row.rank} ${key}: ${got} != ${want.p10}-${want.p90}`);
      }
      if (row.bound !== api.serving.throughput_bound) mismatches.push(`#${row.rank} bound ${row.bound} != ${api.serving.throughput_bound}`);
      if (!row.sentence || row.sentence !== api.serving.throughput_bound_text) mismatches.push(`#${row.rank} sentence "${row.sentence}"`);
      if (Math.abs(money(totalsShown[i]) - api.cost.total_usd) > 0.5 + 0.005 * api.cost.total_usd) {
        mismatches.push(`#${row.rank} total ${totalsShown[i]} != ${api.cost.total_usd}`);
      }
    });
    check('every serving number, TTFT and tokens/s P10-P90, the bound and its sentence equal the JSON API answer', mismatches.length === 0,
          mismatches.slice(0, 6).join('; '));
    checkFits('the ranked table with the serving columns fits a 1440 px window without scrolling sideways',
              await rankedTableWidth(page));
    check('the shown SLOs hold: first token within 2 s, at least 15 tokens/s per user',
          shown.length > 0 && shown.every((r) => r.values.time_to_first_token_seconds.value <= 2 &&
                                                r.values.tokens_per_second_per_user.value >= 15));
    const captions = await page.$$eval('#ranked tbody tr[data-rank] .bar.cost + .bar-caption', (ds) => ds.map((d) => d.textContent));
    check('the egress the user gave is priced where the provider charges for it, and shown',
          recs.some((r) => r.cost.egress_usd > 0) && captions.length === recs.length &&
          recs.every((r, i) => captions[i].includes('egress') === (r.cost.egress_usd > 0)), captions.join(' | '));
    const columnText = await page.$eval('#ranked tbody tr[data-rank] td.user-tps', (td) => td.textContent);
    check('the table shows tokens/s per user', recs.length > 0 && columnText === recs[0].serving.tokens_per_second_per_user.toFixed(1),
          columnText);
    if (screenshot) {
      await page.waitForTimeout(200);
      await page.screenshot({path: screenshot.replace(/\.png$/, '-serving.png'), fullPage: true});
    }

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
    await dailyUseChecks(browser, screenshot, consoleErrors);
    check('no JavaScript errors', consoleErrors.length === 0, consoleErrors.join(' | '));
  } finally {
    await browser.close();
  }
}

// Over HTTPS (web_test.sh's second pass, a TLS stack): the page and its API
// calls with the certificate checked against the test CA, which web_test.sh
// put in the browser's NSS database; no certificate error is ignored.
async function httpsPass() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({viewport: {width: 1440, height: 1100}});
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // A resource that fails to load (the script, over a resumed TLS session) is
  // an error too, not a silent fallback to the form's plain GET.
  page.on('requestfailed', (r) => errors.push(`${r.url()}: ${r.failure() && r.failure().errorText}`));
  try {
    check('the test base is https', base.startsWith('https://'), base);
    const response = await page.goto(base + '/', {waitUntil: 'load'});
    check('page loads over HTTPS with the test CA', response && response.ok() &&
          await page.isVisible('#workload-form'), response ? String(response.status()) : 'no answer');
    check('the page script ran (its memory legend is drawn)',
          await page.$$eval('#memory-legend span', (spans) => spans.length) > 0, errors.join(' | '));
    const security = response ? await response.securityDetails() : null;
    check('the connection is TLS', security !== null && /TLS/.test(security.protocol || ''),
          security ? String(security.protocol) : 'none');
    await page.selectOption('#task', 'TASK_LORA');
    await page.fill('#preset', 'llama-3.1-8b');
    await page.fill('#train-tokens', '5e7');
    await page.fill('#sequence-length', '2048');
    await page.fill('#max-results', '4');
    await page.click('#submit');
    // Rows or the error banner: a failed answer is reported with its message,
    // not as a timeout.
    await page.waitForSelector('#ranked tbody tr[data-rank], #form-error:not([hidden])', {timeout: 60000});
    const rows = await page.$$eval('#ranked tbody tr[data-rank]', (trs) => trs.length);
    const banner = await page.$eval('#form-error', (e) => e.hidden ? '' : e.textContent);
    check('the form asks the API over HTTPS and shows ranked offers', rows > 0, `${rows} rows ${banner}`);
    await page.click('.exports a[data-format="skypilot"]');
    await page.waitForFunction(() => document.querySelector('#export-output').textContent.includes('resources:'),
                               null, {timeout: 20000});
    check('an export over HTTPS', true);
    check('no JavaScript errors over HTTPS', errors.length === 0, errors.join(' | '));
  } finally {
    await browser.close();
  }
}

(process.env.WEB_TEST_HTTPS === '1' ? httpsPass() : main())
  .catch((e) => { failed++; console.log(`FAIL  browser run: ${e.message}`); })
  .finally(() => {
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  });
