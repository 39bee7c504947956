import { z } from 'zod';

/** Token and timing metrics, in the interface's field names (2.8). */
export const Usage = z.object({
  input_tokens: z.number(),
  output_tokens: z.number(),
  reasoning_tokens: z.number().optional(),
  cached_input_tokens: z.number().optional(),
  inference_time_ms: z.number(),
});
export type Usage = z.infer<typeof Usage>;

/** Sums the usage of several model calls; optional counters appear once a call reports them (or when seeded). */
export class UsageTotal {
  private readonly sum: Usage;

  constructor(start: Usage = { input_tokens: 0, output_tokens: 0, inference_time_ms: 0 }) {
    this.sum = { ...start };
  }

  add(usage: Usage): void {
    this.sum.input_tokens += usage.input_tokens;
    this.sum.output_tokens += usage.output_tokens;
    this.sum.inference_time_ms += usage.inference_time_ms;
    if (usage.reasoning_tokens !== undefined) this.sum.reasoning_tokens = (this.sum.reasoning_tokens ?? 0) + usage.reasoning_tokens;
    if (usage.cached_input_tokens !== undefined)
      this.sum.cached_input_tokens = (this.sum.cached_input_tokens ?? 0) + usage.cached_input_tokens;
  }

  get total(): Usage {
    return { ...this.sum };
  }
}
