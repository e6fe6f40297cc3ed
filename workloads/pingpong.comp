// The host-GPU round-trip probe of `gpuoverlap selftest`: the GPU answers every round the CPU
// posts. GLSL, not HLSL like the workloads, because it needs `volatile`, which HLSL lacks:
// every read of `ping` must go to memory. (An atomic compare-exchange spin, tried first, never
// saw the CPU's second post on an H100: the read came from a copy the CPU's write does not
// reach.)
//
// Mailbox (host-visible memory): ping, written by the CPU: the round it waits for (1, 2, ...);
// 0xFFFFFFFF cancels. pong, written by the GPU: the last round it answered.
// 32 invocations that all do the same (one NVIDIA warp, four lavapipe SIMD-8 vectors): uniform
// control flow. With a single invocation, lavapipe's masked lanes broke the spin loop.
// Hazard: a spin that never ends would hold the GPU after the process is gone (seen on an H100:
// the next process's frames timed out). The CPU always posts, by its deadline at the latest
// (the cancel value satisfies every remaining round at once); as a last resort the GPU gives
// up after max_spins reads in all and answers kGaveUp.
#version 450

layout(local_size_x = 32) in;

layout(push_constant) uniform PingPongParams {
  uint rounds;
  uint max_spins;  // reads of ping over all rounds before the GPU gives up
} params;

const uint kGaveUp = 0xFFFFFFFEu;

layout(std430, set = 0, binding = 0) coherent volatile buffer Mailbox {
  uint ping;
  uint pong;
} mailbox;

void main() {
  uint spins = 0u;
  for (uint round = 1u; round <= params.rounds; ++round) {
    while (mailbox.ping < round) {
      if (++spins >= params.max_spins) {
        atomicExchange(mailbox.pong, kGaveUp);
        return;
      }
    }
    atomicExchange(mailbox.pong, round);
  }
}
