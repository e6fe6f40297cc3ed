#!/usr/bin/python3
"""Build step: turn the shader-clock markers of a compiled workload into real clock reads.

glslang's HLSL front end has no intrinsic for VK_KHR_shader_clock, so perlin.hlsl (built with
GPUOVERLAP_SHADER_CLOCK) stores a marker pair, 0xC10C0001 (low word) and 0xC10C0002 (high
word). glslang constant-folds them into OpConstants used by OpStores. This script
disassembles the module, replaces each low-marker use with an OpReadClockKHR at Device scope
(and the high-marker use that follows it with the same read's high word), adds the capability
and extension, reassembles, validates with spirv-val, and writes a C header like
glslangValidator --vn.

Usage: patch_shader_clock.py IN.spv OUT.h VARIABLE EXPECTED_READS

Contract: fails (exit 1, nothing written) unless exactly EXPECTED_READS reads were patched,
every read pairs one low use with the next high use, and spirv-val accepts the result: a
glslang that folds the markers differently must break the build, not the measurement.
"""
import os
import re
import subprocess
import sys
import tempfile

LOW_MARKER = "3238789121"  # 0xC10C0001
HIGH_MARKER = "3238789122"  # 0xC10C0002
TARGET_ENV = "vulkan1.1"  # as the plain modules (see CMakeLists.txt)


def fail(message):
    sys.stderr.write(f"patch_shader_clock: {message}\n")
    sys.exit(1)


def patch(lines, expected_reads):
    text = "\n".join(lines)
    markers = dict()
    for line in lines:
        m = re.match(r"\s*(%\w+) = OpConstant %\w+ (\d+)$", line)
        if m and m.group(2) in (LOW_MARKER, HIGH_MARKER):
            markers[m.group(2)] = m.group(1)
    if set(markers) != {LOW_MARKER, HIGH_MARKER}:
        fail("marker constants not found (built without GPUOVERLAP_SHADER_CLOCK?)")
    low, high = markers[LOW_MARKER], markers[HIGH_MARKER]
    uint = re.search(r"(%\w+) = OpTypeInt 32 0$", text, re.M)
    if not uint:
        fail("no 32-bit unsigned integer type in the module")
    uint = uint.group(1)
    # SPIR-V allows one declaration of each non-aggregate type: reuse the module's uint2.
    existing_v2 = re.search(rf"(%\w+) = OpTypeVector {uint} 2$", text, re.M)
    v2 = existing_v2.group(1) if existing_v2 else "%clock_v2"

    out, reads, pending_high, in_function = [], 0, None, False
    for line in lines:
        stripped = line.strip()
        if " = OpFunction " in line:
            in_function = True
        is_definition = re.match(rf"\s*({low}|{high}) = ", line) is not None
        uses_low = not is_definition and re.search(rf"{low}\b", line)
        uses_high = not is_definition and re.search(rf"{high}\b", line)
        if (uses_low or uses_high) and not in_function:
            fail(f"a marker is used outside a function body: {stripped}")
        if stripped == "OpCapability Shader":
            out += [line, "OpCapability ShaderClockKHR"]
            continue
        if " = OpExtInstImport" in line:
            out += ['OpExtension "SPV_KHR_shader_clock"', line]
            continue
        if re.match(rf"\s*{uint} = OpTypeInt 32 0$", line):
            out += [line] + ([] if existing_v2 else [f"{v2} = OpTypeVector {uint} 2"]) + [
                f"%clock_scope_device = OpConstant {uint} 1"]
            continue
        if uses_low and uses_high:
            fail(f"one instruction uses both markers: {stripped}")
        if uses_low:
            if pending_high:
                fail("a clock read's high word was never stored")
            reads += 1
            out += [f"%clock{reads} = OpReadClockKHR {v2} %clock_scope_device",
                    f"%clock{reads}_lo = OpCompositeExtract {uint} %clock{reads} 0",
                    f"%clock{reads}_hi = OpCompositeExtract {uint} %clock{reads} 1"]
            line = re.sub(rf"{low}\b", f"%clock{reads}_lo", line)
            pending_high = f"%clock{reads}_hi"
        elif uses_high:
            if not pending_high:
                fail("a high clock word is stored before its low word")
            line = re.sub(rf"{high}\b", pending_high, line)
            pending_high = None
        out.append(line)
    if pending_high:
        fail("the last clock read's high word was never stored")
    if reads != expected_reads:
        fail(f"patched {reads} clock reads, expected {expected_reads}")
    return out


def run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        fail(f"{' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def main():
    if len(sys.argv) != 5:
        fail("usage: patch_shader_clock.py IN.spv OUT.h VARIABLE EXPECTED_READS")
    source, header, variable, expected = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    disassembly = run(["spirv-dis", "--raw-id", "--no-header", source]).splitlines()
    patched = patch(disassembly, expected)
    with tempfile.TemporaryDirectory() as scratch:
        asm = os.path.join(scratch, "patched.spvasm")
        binary = os.path.join(scratch, "patched.spv")
        with open(asm, "w") as f:
            f.write("\n".join(patched) + "\n")
        run(["spirv-as", "--target-env", TARGET_ENV, "-o", binary, asm])
        run(["spirv-val", "--target-env", TARGET_ENV, binary])
        with open(binary, "rb") as f:
            words = f.read()
    values = [int.from_bytes(words[i:i + 4], "little") for i in range(0, len(words), 4)]
    body = ",\n".join(
        "\t" + ",".join(f"0x{v:08x}" for v in values[i:i + 8]) for i in range(0, len(values), 8))
    tmp = header + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"// Generated by workloads/patch_shader_clock.py from {os.path.basename(source)}\n"
                f"#pragma once\nconst uint32_t {variable}[] = {{\n{body}\n}};\n")
    os.replace(tmp, header)


if __name__ == "__main__":
    main()
