"""The committed DXBC of the D3D12 backend (workloads/dxbc/, made by scripts/compile-dxbc.sh)
is the compiled form of today's workloads/perlin.hlsl: a change to the HLSL fails here until
the script is run again, and each file is a whole DXBC container with shader code in it."""
import hashlib
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parents[2]
DXBC = ROOT / 'workloads' / 'dxbc'


def test_the_dxbc_was_compiled_from_this_hlsl():
    recorded = (DXBC / 'SOURCE_SHA256').read_text().strip()
    actual = hashlib.sha256((ROOT / 'workloads' / 'perlin.hlsl').read_bytes()).hexdigest()
    assert recorded == actual, (
        'workloads/perlin.hlsl changed since its DXBC was compiled: run scripts/compile-dxbc.sh '
        'and commit workloads/dxbc/')


def test_each_entry_point_is_a_whole_dxbc_container_with_shader_code():
    for entry in ('cs_main', 'vs_main', 'ps_main', 'ps_depth_main'):
        data = (DXBC / f'perlin_{entry}.dxbc').read_bytes()
        assert data[:4] == b'DXBC', entry
        # magic, 16-byte checksum, version, then the container's total size and chunk count.
        total_size, chunks = struct.unpack_from('<II', data, 24)
        assert total_size == len(data), entry
        offsets = struct.unpack_from(f'<{chunks}I', data, 32)
        kinds = {data[offset:offset + 4] for offset in offsets}
        assert kinds & {b'SHEX', b'SHDR'}, (entry, kinds)
