// The README's five lines, type-checked by the suite (tsc --noEmit) against
// the packed package's declarations, and run against a live gateway.
import { GatewayClient, GatewayError, RecommendResponse } from 'gpu-advisor-client';

async function main(target: string): Promise<void> {
  const advisor = new GatewayClient(target);
  const answer: RecommendResponse = await advisor.recommend({
    workload: { task: 'TASK_LORA', model: { preset: 'llama-3.1-8b' }, train_tokens: 5e7, sequence_length: 2048 },
    constraints: { max_total_usd: 500 }, max_results: 3 });
  const best = answer.recommendations[0];
  console.log(`#1 ${best.offer?.provider} ${best.offer?.instance_type}: ${best.estimated_hours.toFixed(1)} h, $${best.cost?.total_usd.toFixed(2)}`);
  try {
    await advisor.recommend({ workload: { task: 'TASK_LORA', model: { params: -1 }, train_tokens: 5e7, sequence_length: 2048 } });
  } catch (e) {
    if (e instanceof GatewayError) console.log(`error field: ${e.field}`);
  }
  advisor.close();
}

main(process.argv[2] ?? '127.0.0.1:50050');
