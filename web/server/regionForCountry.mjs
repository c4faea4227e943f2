// Maps an ISO 3166-1 alpha-2 country code to the report's region: continents, with North and Central America apart as in
// the Dropbox study ("Europe, North America and Central America" were its high-traffic regions). Choices made here:
// - Central America is the isthmus from Mexico to Panama plus the Caribbean islands;
//   North America is the US, Canada, Greenland, Bermuda and Saint Pierre and Miquelon.
// - Russia and Cyprus count as Europe; Turkey, the Caucasus, Central Asia and the Middle East as Asia; Egypt as Africa.
// - Registry pseudo-codes: EU → Europe, AP (Asia/Pacific) → Asia. Antarctica and anything not listed → 'unknown'.

export const REGIONS = Object.freeze(['North America', 'Central America', 'South America', 'Europe', 'Asia', 'Africa', 'Oceania']);

const MEMBERS = {
  'North America': 'US CA GL BM PM UM',
  'Central America': 'MX BZ GT SV HN NI CR PA ' +
    // the Caribbean
    'CU JM HT DO PR BS BB TT AG DM GD KN LC VC AI AW BQ CW SX MF BL GP MQ KY TC VG VI MS',
  'South America': 'AR BO BR CL CO EC GY PY PE SR UY VE FK GF GS',
  Europe: 'AD AL AT AX BA BE BG BY CH CY CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM IS IT JE LI LT LU LV MC MD ME MK ' +
    'MT NL NO PL PT RO RS RU SE SI SJ SK SM UA VA XK EU',
  Asia: 'AE AF AM AZ BD BH BN BT CN GE HK ID IL IN IO IQ IR JO JP KG KH KP KR KW KZ LA LB LK MM MN MO MV MY NP OM PH PK ' +
    'PS QA SA SG SY TH TJ TL TM TR TW UZ VN YE AP',
  Africa: 'AO BF BI BJ BW CD CF CG CI CM CV DJ DZ EG EH ER ET GA GH GM GN GQ GW KE KM LR LS LY MA MG ML MR MU MW MZ NA NE ' +
    'NG RE RW SC SD SH SL SN SO SS ST SZ TD TG TN TZ UG YT ZA ZM ZW',
  Oceania: 'AS AU CK FJ FM GU KI MH MP NC NF NR NU NZ PF PG PN PW SB TK TO TV VU WF WS CX CC HM',
};

const BY_COUNTRY = new Map();
for (const [region, codes] of Object.entries(MEMBERS)) {
  for (const code of codes.split(' ')) {
    if (BY_COUNTRY.has(code)) throw new Error(`${code} is listed in two regions`);
    BY_COUNTRY.set(code, region);
  }
}

/** 'JP' → 'Asia'; case-insensitive; an unknown or malformed code → 'unknown'. */
export function regionForCountry(country) {
  if (typeof country !== 'string') return 'unknown';
  return BY_COUNTRY.get(country.toUpperCase()) ?? 'unknown';
}
