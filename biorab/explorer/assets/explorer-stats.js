// The pinned baseline's statistics, exactly as biorab/explorer/compare.py computes them in Python (a test
// compares the two on the same instances): a paired bootstrap of the accuracy difference with mulberry32
// draws, numpy's linear percentile, and McNemar's test as biorab.metrics.paired.mcnemar computes it.
"use strict";

(function () {
  const N_BOOT = 1000, BOOT_SEED = 20240601, EXACT_BELOW = 25;

  function mulberry32(seed) {
    let a = seed >>> 0;
    return function () {
      a = (a + 0x6D2B79F5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t = (t + Math.imul(t ^ (t >>> 7), t | 61)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  // numpy.percentile's default (linear) interpolation, with numpy's two-sided lerp
  function percentile(sorted, q) {
    const position = q / 100 * (sorted.length - 1);
    const below = Math.floor(position);
    const frac = position - below;
    const a = sorted[below], b = sorted[Math.min(below + 1, sorted.length - 1)];
    const diff = b - a;
    return frac >= 0.5 ? b - diff * (1 - frac) : a + diff * frac;
  }

  // The pairs in canonical order (lost: -1, ties: 0, gained: +1), resampled N_BOOT times with replacement.
  function bootstrapDelta(n, gained, lost) {
    const next = mulberry32(BOOT_SEED);
    const firstGain = n - gained;
    const deltas = new Float64Array(N_BOOT);
    for (let b = 0; b < N_BOOT; b++) {
      let total = 0;
      for (let j = 0; j < n; j++) {
        const k = Math.floor(next() * n);
        total += k < lost ? -1 : k >= firstGain ? 1 : 0;
      }
      deltas[b] = total / n;
    }
    deltas.sort();
    return [percentile(deltas, 2.5), percentile(deltas, 97.5)];
  }

  // erfc for x >= 0: a power series below 2, Lentz's continued fraction above (both to double precision)
  function erfc(x) {
    if (x < 2) {
      let term = x, sum = x;
      for (let k = 1; k < 500 && term > sum * 1e-17; k++) { term *= 2 * x * x / (2 * k + 1); sum += term; }
      return 1 - 2 / Math.sqrt(Math.PI) * Math.exp(-x * x) * sum;
    }
    let f = x, c = x, d = 0;
    for (let k = 1; k < 500; k++) {
      const a = k / 2;
      d = 1 / (x + a * d);
      c = x + a / c;
      const delta = c * d;
      f *= delta;
      if (Math.abs(delta - 1) < 1e-16) break;
    }
    return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
  }

  // McNemar's two-sided p (biorab.metrics.paired.mcnemar): exact binomial below 25 discordant pairs,
  // else chi-square (1 df) with continuity correction
  function mcnemarP(b, c) {
    const d = b + c;
    if (d < EXACT_BELOW) {
      const smaller = Math.min(b, c);
      let comb = 1, tail = 0;
      for (let k = 0; k <= smaller; k++) {
        if (k > 0) comb = comb * (d - k + 1) / k;
        tail += comb;
      }
      return Math.min(1, 2 * tail / Math.pow(2, d));
    }
    const statistic = Math.pow(Math.max(0, Math.abs(b - c) - 1), 2) / d;
    return erfc(Math.sqrt(statistic / 2));
  }

  window.BIORAB_STATS = { N_BOOT, BOOT_SEED, EXACT_BELOW, mulberry32, percentile, bootstrapDelta, erfc, mcnemarP };
})();
