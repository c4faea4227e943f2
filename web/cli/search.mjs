// What a user does to search, for the commands that load a page as a user would (h3probe trial --search, h3probe
// doctor --browser --search): the page must then call searchCompleted().
import path from 'node:path';

export const SEARCH_HELP = `click SELECTOR           click the element
                      submit SELECTOR [TEXT]   type TEXT (default "test") into the field and press Enter
                      script FILE              an ES module whose default export is called with puppeteer's Page`;

/** '' (none: the page calls searchCompleted() by itself), 'click SELECTOR', 'submit SELECTOR [TEXT]' or 'script FILE'. Throws naming the form. */
export function parseSearch(text) {
  const [verb, ...rest] = text.trim().split(/\s+/);
  if (!verb) return null;
  if (verb === 'click' && rest.length === 1) return { verb, selector: rest[0] };
  if (verb === 'submit' && rest.length >= 1) return { verb, selector: rest[0], text: rest.slice(1).join(' ') || 'test' };
  if (verb === 'script' && rest.length === 1) return { verb, file: path.resolve(rest[0]) };
  throw new Error(`--search must be "click SELECTOR", "submit SELECTOR [TEXT]" or "script FILE" (selectors without spaces), not "${text}"`);
}

/** The search as the page's user does it, on the tab interface of browsers.mjs (tabPage()); a script gets puppeteer's Page. */
export async function doSearch(page, search) {
  if (!search) return;
  if (search.verb === 'click') await page.click(search.selector);
  if (search.verb === 'submit') {
    await page.fill(search.selector, search.text);
    await page.press(search.selector, 'Enter');
  }
  if (search.verb === 'script') await (await import(search.file)).default(page.puppeteer);
}

/** The search as the options gave it, for messages: ' after --search "click #go"', or ' (no --search given)'. */
export const searchText = (search) => (search ? ` after --search "${search.verb} ${search.selector ?? search.file}"` : ' (no --search given)');
