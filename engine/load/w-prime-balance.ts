/**
 * W′ balance: how much of the work capacity above critical power (W′) is left at each second, by
 * Skiba's integral model (Skiba et al. 2012, "Modeling the expenditure and reconstitution of work
 * capacity above critical power") as GoldenCheetah computes it (src/Metrics/WPrime.cpp):
 *
 *   W′bal(t) = W′ − Σ_{u ≤ t} max(0, P(u) − CP) · e^(−(t − u)/τ)
 *   τ = 546 · e^(−0.01 · D_CP) + 316,   D_CP = CP − (mean of the samples below CP)
 *
 * On the 1 Hz grid, gaps (NaN) count as 0 W, as GoldenCheetah fills them; D_CP's mean includes them
 * and every other sample below CP (zeros too); with none below CP, D_CP = CP. GoldenCheetah rounds τ
 * down to whole seconds: `skibaTau` returns it unrounded, and the caller chooses.
 *
 * The sum is kept as a recurrence, S(t) = S(t−1)·e^(−1/τ) + max(0, P(t) − CP), which is the same
 * sum without the e^(t/τ) factor that overflows a double after some hours.
 */

/** Skiba's time constant for a ride (s), unrounded. */
export function skibaTau(power: Float64Array, cp: number): number {
  let below = 0;
  let count = 0;
  for (let i = 0; i < power.length; i++) {
    const p = power[i]! === power[i]! ? power[i]! : 0;
    if (p < cp) {
      below += p;
      count++;
    }
  }
  const dcp = count > 0 ? cp - below / count : cp;
  return 546 * Math.exp(-0.01 * dcp) + 316;
}

/** W′bal at every second (J). */
export function wPrimeBalance(power: Float64Array, cp: number, wPrime: number, tau: number): Float64Array {
  const out = new Float64Array(power.length);
  const keep = Math.exp(-1 / tau);
  let spent = 0;
  for (let t = 0; t < power.length; t++) {
    const p = power[t]! === power[t]! ? power[t]! : 0;
    spent = spent * keep + (p > cp ? p - cp : 0);
    out[t] = wPrime - spent;
  }
  return out;
}
