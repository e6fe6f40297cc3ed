// The workload: 4-D gradient (Perlin) noise, stamped by the first thread to start and the last
// thread to finish. One source, four entry points (cs_main, vs_main, ps_main, ps_depth_main),
// compiled to SPIR-V at build time by glslangValidator, and with GPUOVERLAP_D3D12 to DXBC for
// the D3D12 backend (only the resource declarations and the three memory operations differ).
//
// Stamp protocol, per workload slot:
//   counters.started  : prev = atomicAdd(+1); prev == 0       -> stamps.start = frame
//   counters.finished : done = atomicAdd(+1); done + 1 == N   -> stamps.end   = frame
// The counters and stamps bindings cover exactly this workload's 64-byte slot (the executor
// binds them at the slot's offset), so no two workloads' descriptors overlap: synchronization
// validation sees independent workloads touch disjoint memory, as they do.
//
// Dependencies carry data: a consumer reads up to 4 producer buffers (bindings 4-7) and 4
// producer render targets or textures (bindings 8-11), one value each per thread, so a missing barrier is
// a real hazard that validation can see. The values nudge the noise input by a negligible
// amount; the work per thread does not change.
// Counters are zeroed by the executor before the frame's gate opens. Stamps are written with
// atomics on a globallycoherent buffer in host-visible memory so the CPU poller sees them
// without waiting for the work to complete.
// Hazard: glslang's HLSL front end emits invalid SPIR-V for InterlockedAdd with a plain int
// literal; always pass unsigned literals (1u).
//
// Shader clock (VK_KHR_shader_clock, device scope): the stamping thread also stores the clock
// it read just before its stamp, start at byte 8 and end at byte 16 of the slot (lo, hi words).
// HLSL as glslang reads it has no clock intrinsic, so GPUOVERLAP_SHADER_CLOCK builds read a
// marker constant pair that workloads/patch_shader_clock.py replaces with OpReadClockKHR after
// compilation (and the build validates the result with spirv-val). Without the define the
// clock words stay zero and the module needs no extension.

struct Params {
  uint frame;         // written into the stamps; never 0 (stamps start zeroed)
  uint slot;          // workload slot (the bindings already point at it; kept for debugging)
  uint thread_count;  // N: threads (compute) or pixels (graphics) of this workload
  uint iterations;    // noise evaluations per thread
  uint width;         // graphics: render target width, to number pixels
  uint stamping;      // 0: no counters, no stamps (measures the protocol's own overhead)
  uint producers;     // bits 0-3: producer buffers bound, bits 4-7: producer render targets,
                      // bit 8: cs_main writes output_texture instead of output_values
};

#ifdef GPUOVERLAP_D3D12
// D3D12 (DXBC for shader model 5.0, compiled by vkd3d-compiler: scripts/compile-dxbc.sh): the
// parameters are root constants, and the counters, stamps and outputs are structured buffers
// of uint, because that compiler has no RWByteAddressBuffer atomics or loads and no
// globallycoherent. The stamp memory is a CUSTOM heap the CPU reads uncached or write-back.
cbuffer ParamsBuffer : register(b0) { Params params; };
ByteAddressBuffer input_values : register(t0);
RWStructuredBuffer<uint> output_values : register(u0);
RWStructuredBuffer<uint> counters : register(u1);
RWStructuredBuffer<uint> stamps : register(u2);
ByteAddressBuffer producer_output0 : register(t1);
ByteAddressBuffer producer_output1 : register(t2);
ByteAddressBuffer producer_output2 : register(t3);
ByteAddressBuffer producer_output3 : register(t4);
// Textures are arrays: a D3D12 view of one subresource of an array texture has a
// TEXTURE2DARRAY dimension (its FirstArraySlice picks the slice), and a view of a plain
// texture may have it too, with one slice.
Texture2DArray<float> producer_target0 : register(t5);
Texture2DArray<float> producer_target1 : register(t6);
Texture2DArray<float> producer_target2 : register(t7);
Texture2DArray<float> producer_target3 : register(t8);
RWTexture2DArray<float> output_texture : register(u3);
#define TARGET_LOAD(texture, x) texture.Load(int4(x, 0, 0, 0))
#define TEXTURE_STORE(x, y, value) output_texture[uint3(x, y, 0u)] = (value)
// Word `index` of this workload's counters, stamps or outputs.
#define COUNTER_ADD(index, value, previous) InterlockedAdd(counters[index], value, previous)
#define STAMP_EXCHANGE(offset, value, previous) \
  InterlockedExchange(stamps[(offset) / 4u], value, previous)
#define OUTPUT_STORE(index, value) output_values[index] = (value)
#else
[[vk::push_constant]] ConstantBuffer<Params> params;

[[vk::binding(0, 0)]] ByteAddressBuffer input_values;               // float4 per element
[[vk::binding(1, 0)]] RWByteAddressBuffer output_values;            // float per thread (compute)
[[vk::binding(2, 0)]] RWByteAddressBuffer counters;                 // device memory
[[vk::binding(3, 0)]] globallycoherent RWByteAddressBuffer stamps;  // host-visible memory
[[vk::binding(4, 0)]] ByteAddressBuffer producer_output0;
[[vk::binding(5, 0)]] ByteAddressBuffer producer_output1;
[[vk::binding(6, 0)]] ByteAddressBuffer producer_output2;
[[vk::binding(7, 0)]] ByteAddressBuffer producer_output3;
[[vk::binding(8, 0)]] Texture2D<float> producer_target0;
[[vk::binding(9, 0)]] Texture2D<float> producer_target1;
[[vk::binding(10, 0)]] Texture2D<float> producer_target2;
[[vk::binding(11, 0)]] Texture2D<float> producer_target3;
// A dispatch's declared texture subresource (an r32f storage image: glslang names the format
// R32f from the element type, and the view must match it).
[[vk::binding(12, 0)]] RWTexture2D<float> output_texture;
#define COUNTER_ADD(index, value, previous) counters.InterlockedAdd((index) * 4u, value, previous)
#define STAMP_EXCHANGE(offset, value, previous) stamps.InterlockedExchange(offset, value, previous)
#define OUTPUT_STORE(index, value) output_values.Store((index) * 4u, value)
// Each view is 2-D, of one subresource.
#define TARGET_LOAD(texture, x) texture.Load(int3(x, 0, 0))
#define TEXTURE_STORE(x, y, value) output_texture[uint2(x, y)] = (value)
#endif

static const uint kInputElements = 65536;
static const uint kWritesTexture = 0x100u;  // params.producers bit 8
// Every output holds at least 1024 values (one group is 1024 threads, a render target is 1024
// pixels wide), so a consumer reads element (thread % 1024) of each producer output.
static const uint kProducerElements = 1024;

uint hash32(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

uint corner_hash(int4 c) {
  return hash32(uint(c.x) + hash32(uint(c.y) + hash32(uint(c.z) + hash32(uint(c.w)))));
}

// Dot product of the offset with one of the 32 gradients of 4-D Perlin noise (edges of the
// tesseract: one component zero, the other three +-1).
float gradient_dot(uint h, float4 d) {
  float4 signs = float4((h & 4u) != 0u ? -1.0 : 1.0, (h & 8u) != 0u ? -1.0 : 1.0,
                        (h & 16u) != 0u ? -1.0 : 1.0, (h & 32u) != 0u ? -1.0 : 1.0);
  float4 g = d * signs;
  uint zero_axis = h & 3u;
  float skipped = zero_axis == 0u ? g.x : (zero_axis == 1u ? g.y : (zero_axis == 2u ? g.z : g.w));
  return g.x + g.y + g.z + g.w - skipped;
}

float4 fade(float4 t) { return t * t * t * (t * (t * 6.0 - 15.0) + 10.0); }

float perlin4(float4 p) {
  float4 cell = floor(p);
  float4 f = p - cell;
  int4 c = int4(cell);
  float4 u = fade(f);
  float corners[16];
  [unroll] for (uint i = 0; i < 16u; ++i) {
    int4 o = int4(i & 1u, (i >> 1) & 1u, (i >> 2) & 1u, (i >> 3) & 1u);
    corners[i] = gradient_dot(corner_hash(c + o), f - float4(o));
  }
  float x8[8];
  [unroll] for (uint a = 0; a < 8u; ++a) x8[a] = lerp(corners[2u * a], corners[2u * a + 1u], u.x);
  float y4[4];
  [unroll] for (uint b = 0; b < 4u; ++b) y4[b] = lerp(x8[2u * b], x8[2u * b + 1u], u.y);
  float z0 = lerp(y4[0], y4[1], u.z);
  float z1 = lerp(y4[2], y4[3], u.z);
  return lerp(z0, z1, u.w);
}

#ifdef GPUOVERLAP_SHADER_CLOCK
// The marker pair (lo, hi) of a device-scope clock read; see the header comment.
uint2 device_clock() { return uint2(0xC10C0001u, 0xC10C0002u); }
#endif

// Clock first, then the frame number: whoever sees the stamp may read the clock words.
void write_stamp(uint offset, uint clock_offset) {
#ifdef GPUOVERLAP_SHADER_CLOCK
  stamps.Store2(clock_offset, device_clock());
  DeviceMemoryBarrier();
#endif
  uint ignored;
  STAMP_EXCHANGE(offset, params.frame, ignored);
}

void stamp_start() {
  if (params.stamping == 0u) return;
  uint previous;
  COUNTER_ADD(0u, 1u, previous);
  if (previous == 0u) write_stamp(0u, 8u);
}

void stamp_end() {
  if (params.stamping == 0u) return;
  DeviceMemoryBarrier();  // the thread's results are issued before it counts as finished
  uint finished;
  COUNTER_ADD(1u, 1u, finished);
  if (finished + 1u == params.thread_count) write_stamp(4u, 16u);
}

float producer_input(uint thread_index) {
  uint i = thread_index % kProducerElements;
  uint buffers = params.producers & 0xFu;
  uint targets = (params.producers >> 4) & 0xFu;
  float sum = 0.0;
  if (buffers > 0u) sum += asfloat(producer_output0.Load(i * 4u));
  if (buffers > 1u) sum += asfloat(producer_output1.Load(i * 4u));
  if (buffers > 2u) sum += asfloat(producer_output2.Load(i * 4u));
  if (buffers > 3u) sum += asfloat(producer_output3.Load(i * 4u));
  if (targets > 0u) sum += TARGET_LOAD(producer_target0, i);
  if (targets > 1u) sum += TARGET_LOAD(producer_target1, i);
  if (targets > 2u) sum += TARGET_LOAD(producer_target2, i);
  if (targets > 3u) sum += TARGET_LOAD(producer_target3, i);
  return sum;
}

// Background compiles (background/shader_variants.h) build specialised variants with the
// iteration count folded into a constant, as a driver's PGO recompile would; the build-time
// shaders never define it and read the count from the push constants.
#ifdef GPUOVERLAP_FIXED_ITERATIONS
#define NOISE_ITERATIONS GPUOVERLAP_FIXED_ITERATIONS
#else
#define NOISE_ITERATIONS params.iterations
#endif

float noise_work(uint thread_index) {
  float4 p = asfloat(input_values.Load4((thread_index % kInputElements) * 16u));
  p.x += producer_input(thread_index) * 1.0e-6;
  float accumulated = 0.0;
  for (uint i = 0; i < NOISE_ITERATIONS; ++i) {
    // Each step depends on the previous result, so the loop cannot be shortened.
    accumulated += perlin4(p);
    p = p * 1.013 + float4(0.37, accumulated * 0.01, 0.11, 0.05);
  }
#ifdef GPUOVERLAP_VARIANT_SALT
  // Never taken (the frame counter would have to reach 2^32 - salt): makes each background
  // compile's bytecode distinct without changing what it computes.
  if (params.frame == 0xFFFFFFFFu - GPUOVERLAP_VARIANT_SALT) accumulated += 1.0;
#endif
  return accumulated;
}

[numthreads(64, 1, 1)]
void cs_main(uint3 thread_id : SV_DispatchThreadID) {
  stamp_start();
  float value = noise_work(thread_id.x);
  // A dispatch into a texture runs one thread per pixel of its mip, params.width wide.
  if ((params.producers & kWritesTexture) != 0u)
    TEXTURE_STORE(thread_id.x % params.width, thread_id.x / params.width, value);
  else
    OUTPUT_STORE(thread_id.x, asuint(value));
  stamp_end();
}

// Full-screen triangle: three vertices cover the whole render target once.
float4 vs_main(uint vertex_id : SV_VertexID) : SV_Position {
  float2 uv = float2((vertex_id << 1) & 2u, vertex_id & 2u);
  return float4(uv * 2.0 - 1.0, 0.0, 1.0);
}

float4 ps_main(float4 position : SV_Position) : SV_Target {
  stamp_start();
  uint pixel_index = uint(position.y) * params.width + uint(position.x);
  float value = noise_work(pixel_index);
  stamp_end();
  return float4(value, 0.0, 0.0, 1.0);
}

// A depth-only draw (into a d32 texture, with no colour attachment): the noise sets each
// pixel's depth, so the work has an output and cannot be removed with the colour it lacks.
// The depth test always passes (the pipeline's), so every pixel runs and writes.
float ps_depth_main(float4 position : SV_Position) : SV_Depth {
  stamp_start();
  uint pixel_index = uint(position.y) * params.width + uint(position.x);
  float value = noise_work(pixel_index);
  stamp_end();
  return saturate(abs(value) * 1.0e-3);
}
