// The doctor's test beacon: `h3probe doctor` posts one per database (a run of no request, outcome "error"), which the
// collector stores as it stores any beacon. The report leaves it out of every count and says how many it left out.
export const DOCTOR_ID = 'h3probe-doctor';
