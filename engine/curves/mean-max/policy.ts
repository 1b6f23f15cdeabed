/**
 * The search loop's tuning rules (mean-max.ts), in one place: which durations are searched with
 * sleeping blocks and bounds, and which are scanned in full. None of this bears on exactness: a full
 * scan is the plain scan, and the search is exact at any duration (settle.ts); these rules only pick
 * the cheaper of the two. The figures behind each constant are in bench/README.md ("engine").
 */

/** Shorter series are scanned in full: n²/2 sums cost less than setting up the search. */
export const SMALL = 128;
/** Shorter durations sum every awake leaf: the bound is loose against short windows. */
const BOUND_FROM = 48;
/** Durations further apart than this (or than this on average over the next 16) are scanned in full: nearly every block would be awake. */
const SPARSE = 16;
/** When a duration sums most windows all the same, the next this many are scanned in full (doubling while it recurs). */
const FULL_SPELL = 64;
/** Durations at least this long, scanned in full, skip blocks by a bound needing no tables (settle.ts, scanCoarse). */
const COARSE_FROM = 32;
/** A periodic template is looked for (once) when a bounded duration sums more than 1/this of its windows. */
const TEMPLATE_SUMMED = 8;
/**
 * With a shift in use, what a woken block costs beside a window summed (a bound, a dominance query,
 * a sleep: 20–40 windows' worth, measured), and how many searched durations are weighed at once
 * against the plain scan's windows.
 */
const WAKE_COST = 32;
const COST_SPAN = 64;

/**
 * One run's choices, duration by duration. In full: no prefix sums to trust, a short series,
 * durations too far apart for sleeping blocks to pay (e.g. the 19 default durations: nearly every
 * block would be awake and the bound rebuilt each time), or a spell after pruning failed:
 *
 * - without a shift, a bounded duration that summed most windows anyway (ties up to rounding) starts
 *   a spell of FULL_SPELL durations in full, doubling each time it happens again;
 * - with a shift (repeats.ts), whose dominance a full scan would forgo, the search's cost (a window
 *   summed, WAKE_COST per block woken) is weighed against the plain scan's windows over COST_SPAN
 *   searched durations, and a dearer search starts such a spell (a float sine of a short period:
 *   ties up to rounding at every duration although dominance rules much out).
 */
export class SearchPolicy {
  private fullUntil = 0; // durations up to this are scanned in full
  private spell = FULL_SPELL;
  private askedTemplate = false;
  private costed = 0;
  private searchCost = 0;
  private plainCost = 0;
  private costSpell = FULL_SPELL;

  constructor(
    private readonly durations: Int32Array,
    private readonly n: number,
    /** Whether the prefix sums are finite (a non-finite one stays so: P[n] tells). */
    private readonly finite: boolean,
  ) {}

  /** Whether durations[k] is scanned in full, the previous duration computed being prevD. */
  scansInFull(k: number, prevD: number): boolean {
    const d = this.durations[k]!;
    return !this.finite || this.n < SMALL || d - prevD > SPARSE || !this.dense(k) || d <= this.fullUntil;
  }

  /** Whether a searched duration bounds its blocks (else it sums every awake leaf). */
  bounds(d: number): boolean {
    return d >= BOUND_FROM;
  }

  /** Whether a full scan of d skips blocks by the bound needing no tables (not in a spell after pruning failed). */
  coarse(d: number): boolean {
    return this.finite && d >= COARSE_FROM && d > this.fullUntil;
  }

  /** Whether to look for a periodic template now, after a bounded duration that summed `summed` windows: once, when that is many. */
  asksTemplate(summed: number): boolean {
    if (this.askedTemplate || TEMPLATE_SUMMED * summed <= this.n) return false;
    this.askedTemplate = true;
    return true;
  }

  /** After a bounded duration d: its windows summed, blocks woken, and the plain scan's windows; starts a spell in full when the search is not paying. */
  weigh(d: number, summed: number, wakes: number, windows: number, shifted: boolean): void {
    if (shifted) {
      this.searchCost += summed + WAKE_COST * wakes;
      this.plainCost += windows;
      if (++this.costed === COST_SPAN) {
        if (this.searchCost > this.plainCost) {
          this.fullUntil = d + this.costSpell;
          this.costSpell *= 2;
        }
        this.costed = this.searchCost = this.plainCost = 0;
      }
    } else if (2 * summed > windows) {
      this.fullUntil = d + this.spell;
      this.spell *= 2;
    } else this.spell = FULL_SPELL;
  }

  /** Whether durations k, k+1, … go on for a while no further than SPARSE apart on average (blocks sleep between them). */
  private dense(k: number): boolean {
    const durations = this.durations;
    const ahead = Math.min(k + 16, durations.length - 1);
    return durations[ahead]! - durations[k]! <= (ahead - k) * SPARSE;
  }
}
