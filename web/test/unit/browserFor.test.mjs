// The browser of a beacon, from the headers of the request that carried it: client hints first, then the User-Agent.
import test from 'node:test';
import assert from 'node:assert/strict';
import { BROWSERS, browserFor } from '../../server/browserFor.mjs';

const UA = {
  chrome: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  headless: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/147.0.0.0 Safari/537.36',
  firefoxEsr: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  safari: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  webkitGtk: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.0 Safari/605.1.15',
  iosChrome: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1',
  iosFirefox: 'Mozilla/5.0 (iPad; CPU OS 16_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/125.0 Mobile/15E148 Safari/605.1.15',
  curl: 'curl/7.88.1',
};

test('Sec-CH-UA names the engine by its "Chromium" brand, whatever the other brands are', () => {
  assert.deepEqual(browserFor({ 'sec-ch-ua': '"Chromium";v="131", "Not_A Brand";v="24", "Google Chrome";v="131"', 'user-agent': UA.firefoxEsr }),
    { browser: 'chromium', browserMajor: 131 });
  assert.deepEqual(browserFor({ 'sec-ch-ua': '"Not)A;Brand";v="99", "Microsoft Edge";v="127", "Chromium";v="127"' }),
    { browser: 'chromium', browserMajor: 127 });
  // No Chromium brand (a future engine, or a forged list): the User-Agent decides.
  assert.deepEqual(browserFor({ 'sec-ch-ua': '"Not_A Brand";v="8"', 'user-agent': UA.firefoxEsr }), { browser: 'firefox', browserMajor: 128 });
});

test('without client hints the User-Agent gives engine and major version only', () => {
  const cases = [
    [UA.chrome, 'chromium', 131], [UA.headless, 'chromium', 147], [UA.firefoxEsr, 'firefox', 128],
    [UA.safari, 'webkit', 17], [UA.webkitGtk, 'webkit', 16],
    // Every browser on iOS/iPadOS is WebKit, whatever it calls itself.
    [UA.iosChrome, 'webkit', 17], [UA.iosFirefox, 'webkit', 16],
    [UA.curl, 'other', null], ['', 'other', null],
  ];
  for (const [ua, browser, browserMajor] of cases) {
    assert.deepEqual(browserFor({ 'user-agent': ua }), { browser, browserMajor }, ua);
    assert.ok(BROWSERS.includes(browser));
  }
});

test('absurd versions and huge headers give no version, not an error', () => {
  assert.deepEqual(browserFor({ 'user-agent': 'Firefox/99999999' }), { browser: 'firefox', browserMajor: null });
  assert.deepEqual(browserFor({ 'user-agent': `${'x'.repeat(600)} Firefox/128.0` }), { browser: 'other', browserMajor: null });
  assert.deepEqual(browserFor(undefined), { browser: 'other', browserMajor: null });
});
