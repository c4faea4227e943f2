// How the report rounds a number it prints (text and HTML alike), so that the last bits of a float never show. The two
// stores compute a statistic by different paths (C++ over the values for SQLite, sums in SQL in another order for
// ClickHouse), which can differ in the last bits; and a figure on a rounding boundary is common (the mean of values on
// a 0.1 ms grid is often one: -0.865), where those bits alone would print -0.86 from one store and -0.87 from the other.

/** v rounded 6 decimals past the d shown: what toFixed(d) and the sign are then read from. */
export const snap = (v, d) => Number(v.toFixed(d + 6));

/** v with d decimals, as toFixed(d) of snap(v, d). */
export const fixed = (v, d) => snap(v, d).toFixed(d);

/** v as a whole number (snap(v, 0) rounded). */
export const whole = (v) => Math.round(snap(v, 0));
