"""`wheelaudit check --env [PATH_OR_PYTHON]`: an installed environment audited as one install.

The must-show: wheels installed by pip (`pip install --no-deps --no-index --target DIR`, or
`--prefix DIR` for a venv's layout) give, finding by finding, what `check --together` gives on
the same wheels: codes, subjects, paths, symbols, and the messages once each wheel's file name
is read as its installed `.dist-info` folder's name. Everything runs through the command line.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from packaging.utils import canonicalize_name, parse_wheel_filename

from wheelaudit.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
RUNTIMES = ROOT / "rules" / "runtimes.toml"
EXECUTORCH = ROOT / "rules" / "executorch.toml"
TAG_LINUX = "cp311-cp311-manylinux_2_28_x86_64"
TAG_MLX = "py3-none-macosx_14_0_arm64"
DELEGATE = "executorch/lib/libexecutorch_backend_mlx.dylib"
LIBMLX = "mlx/lib/libmlx.dylib"
METALLIB = b"MTLB\x01\x00\x02\x00 a fixture metallib".ljust(64, b"\0")
PLATFORMS = ("macosx_14_0_arm64", "manylinux_2_28_x86_64", "linux_x86_64", "any")

# two OpenMP runtimes, as torch and scikit-learn each bundle one (the OpenMP API is what every
# implementation defines: the sentinels of rules/runtimes.toml)
OMP_C = """\
int omp_get_num_threads(void) { return 1; }
int omp_get_max_threads(void) { return 1; }
void omp_set_num_threads(int n) { (void)n; }
const char *%s_banner = "libgomp: ";
"""


def wheelaudit(*argv) -> tuple[int, str, str]:
    """The command line, in this process (``wheelaudit.cli.main.main``): (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def pip_install(wheels, *, target: Path | None = None, prefix: Path | None = None) -> Path:
    """Install with pip, from the wheel files only (no index, no dependencies, no bytecode)."""
    # (other platforms' wheels install only into a --target folder; --prefix takes this machine's)
    where = ["--target", str(target)] if target is not None else ["--prefix", str(prefix)]
    plats = [a for p in PLATFORMS for a in ("--platform", p) if target is not None]
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile",
           "--disable-pip-version-check", "--only-binary=:all:", *plats, *where, *map(str, wheels)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return target if target is not None else prefix  # type: ignore[return-value]


@pytest.fixture(scope="module")
def wheels(fixture_wheels, fixture_build_dir, provider_wheels, audit_wheels, tmp_path_factory) -> dict[str, Path]:
    """The fixture wheels, and wheels of other distributions assembled here from fixture binaries."""
    mw = sys.modules["make_wheels"]  # (loaded by the fixture_wheels fixture)
    out = tmp_path_factory.mktemp("env_wheels")
    a64 = fixture_build_dir / "macho" / "arm64"
    elf = fixture_build_dir / "elf"

    def dist(name: str, version: str, tag: str, members: dict, requires=()) -> Path:
        meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
        meta += [f"Requires-Dist: {r}" for r in requires]
        stem = name.replace("-", "_")
        return mw.write_dist_wheel(out / stem / f"{stem}-{version}-{tag}.whl", members, tag, stem, version,
                                   ("\n".join(meta) + "\n\n").encode())

    w: dict[str, Path] = dict(fixture_wheels)
    w.update({f"prov:{k}": v for k, v in provider_wheels.items()})
    w["mlx"] = dist("mlx-metal", "0.32.4", TAG_MLX, {LIBMLX: a64 / "lib" / "libexecutorch_backend_mlx.dylib",
                                                      "mlx/lib/mlx.metallib": METALLIB}, ["executorch"])
    w["torch_linux"] = dist("torch", "2.14.1", TAG_LINUX, {
        "torch/__init__.py": b"", "torch/lib/libtorch.so": elf / "stubs" / "libtorch.so",
        "torch/lib/libc10.so": elf / "stubs" / "libc10.so"})
    w["alpha"] = dist("alpha", "1.0", "py3-none-any", {"common/__init__.py": b"", "common/config.py": b"A = 1\n",
                                                        "alpha/__init__.py": b""})
    w["beta"] = dist("beta", "1.0", "py3-none-any", {"common/__init__.py": b"", "common/config.py": b"B = 2\n",
                                                      "beta/__init__.py": b""})
    build = out / "_omp"
    build.mkdir()
    for who, lib in (("torchomp", "torchomp/lib/libgomp-a34b3233.so.1"),
                     ("sklearnomp", "sklearnomp.libs/libgomp-d22c30c5.so.1.0.0")):
        (build / f"{who}.c").write_text(OMP_C % who)
        so = build / f"{who}.so"
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", f"-Wl,-soname,{Path(lib).name}", "-o", str(so),
                        str(build / f"{who}.c")], check=True)
        w[who] = dist(who, "1.0", TAG_LINUX, {f"{who}/__init__.py": b"", lib: so})
    # the same extension module in a cp311 wheel and in an abi3 one: each is held to its own tags
    good = next(iter(audit_wheels.values())).parent.parent / "_build" / "elf" / "good.cpython-311-x86_64-linux-gnu.so"
    w["plainext"] = dist("plainext", "1.0", TAG_LINUX, {"plainext/good.cpython-311-x86_64-linux-gnu.so": good})
    w["abi3ext"] = dist("abi3ext", "1.0", "cp39-abi3-manylinux_2_28_x86_64",
                        {"abi3ext/good.cpython-311-x86_64-linux-gnu.so": good})
    # a native executable installed as a script (above site-packages once installed), in a pure
    # wheel: WA503, which names where it is
    w["tool"] = dist("tool", "1.0", "py3-none-any", {"tool/__init__.py": b"",
                                                     "tool-1.0.data/scripts/tool-bin": elf / "stubs" / "libc10.so"})
    return w


#: the sets of wheels installed together, each with the codes `check --together` must find in it
SETS = {
    # two MLX runtimes (executorch's and mlx-metal's): WA201, with two metallibs: WA301
    "macos": (("macos_clean", "mlx"), ("--rules", EXECUTORCH), {"WA201", "WA301"}),
    # two OpenMP runtimes (WA201); a dependency that another distribution provides, which the
    # needing one does not require (WA505, twice); a path two distributions ship with different
    # contents (WA002); an extension module held to its own wheel's tags beside an abi3 wheel
    # (WA602 for the abi3 one only)
    "linux": (("torchomp", "sklearnomp", "prov:consumer_no_requirement", "prov:provider", "linux_no_torch_requirement",
               "torch_linux", "alpha", "beta", "plainext", "abi3ext"), ("--rules", RUNTIMES),
              {"WA201", "WA505", "WA002", "WA602"}),
    # a dependency that no installed distribution provides (WA501); the script is left to
    # test_scripts_stay_in_the_prefix (in a --target folder it is outside the prefix)
    "missing": (("prov:consumer_requires", "tool"), ("--select", "WA501"), {"WA501"}),
}


@pytest.fixture(scope="module")
def sites(wheels, tmp_path_factory) -> dict[str, Path]:
    """Each set of SETS installed by pip into a folder of its own (``--target``)."""
    root = tmp_path_factory.mktemp("env_sites")
    return {name: pip_install([wheels[k] for k in keys], target=root / name) for name, (keys, _r, _c) in SETS.items()}


@pytest.fixture(scope="module")
def venv(wheels, tmp_path_factory) -> Path:
    """A venv's layout made by pip (``--prefix``: lib/python3.X/site-packages, bin/), with a
    pyvenv.cfg and a bin/python that leaves a mark if it is ever run."""
    root = tmp_path_factory.mktemp("env_venv")
    venv = pip_install([wheels["torchomp"], wheels["sklearnomp"], wheels["tool"]], prefix=root / "venv")
    ver = f"{sys.version_info[0]}.{sys.version_info[1]}"
    (venv / "pyvenv.cfg").write_text(f"home = /usr/bin\ninclude-system-site-packages = false\nversion = {ver}.0\n")
    python = venv / "bin" / "python"
    python.write_text(f"#!/bin/sh\ntouch {root / 'RAN'}\n")
    python.chmod(0o755)
    return venv


def site_copy(sites: dict[str, Path], name: str, tmp_path: Path) -> Path:
    """A copy of an installed set to spoil."""
    return Path(shutil.copytree(sites[name], tmp_path / name))


def installed_labels(site: Path, wheel_files) -> dict[str, str]:
    """Each wheel's file name -> the name of the .dist-info folder pip made of it."""
    infos = {canonicalize_name(p.name[: -len(".dist-info")].rsplit("-", 1)[0]): p.name
             for p in site.glob("*.dist-info")}
    return {Path(w).name: infos[canonicalize_name(parse_wheel_filename(Path(w).name)[0])] for w in wheel_files}


def findings(data: dict, relabel: dict[str, str] | None = None) -> list[tuple]:
    """The one report's findings, comparable: (code, severity, subject, paths, symbols, message)."""
    assert len(data["wheels"]) == 1
    out = []
    for f in data["wheels"][0]["findings"]:
        msg = f["message"]
        for a, b in (relabel or {}).items():
            msg = msg.replace(a, b)
        out.append((f["code"], f["severity"], f["subject"], tuple(f["paths"]), tuple(f["symbols"]), msg))
    return sorted(out)


def json_report(*argv) -> tuple[int, dict]:
    code, out, err = wheelaudit(*argv, "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


# --------------------------------------------------------------------------------------------
# the must-show: --env finds what --together finds


@pytest.mark.parametrize("name", list(SETS))
def test_env_finds_what_together_finds(wheels, sites, name):
    keys, args, codes = SETS[name]
    files = [wheels[k] for k in keys]
    site = sites[name]
    code_t, together = json_report("check", "--together", *files, *args)
    code_e, env = json_report("check", "--env", site, *args)
    relabel = installed_labels(site, files)
    assert {f[0] for f in findings(together)} >= codes
    assert findings(env) == findings(together, relabel)
    assert code_e == code_t == 1
    # the report names the site-packages folder and each installed distribution, in the schema
    jsonschema.validate(env, json.loads((resources.files("wheelaudit") / "schemas" / "check.schema.json").read_text()))
    w = env["wheels"][0]
    assert Path(w["path"]) == site
    assert sorted(Path(m).name for m in w["members"]) == sorted(relabel.values())


def test_the_findings_name_each_distribution(sites):
    code, data = json_report("check", "--env", sites["macos"], "--rules", RUNTIMES, "--select", "WA2")
    assert code == 1
    [(c, _sev, subject, paths, _sym, msg)] = findings(data)
    assert (c, subject, paths) == ("WA201", "mlx", (DELEGATE, LIBMLX))
    assert f"{DELEGATE} (executorch-1.6.0.dist-info;" in msg and f"{LIBMLX} (mlx_metal-0.32.4.dist-info;" in msg
    code, out, _ = wheelaudit("check", "--env", sites["linux"], "--rules", RUNTIMES, "--select", "WA201")
    assert code == 1 and out.startswith("linux: WA201 error [openmp]")
    assert "torchomp-1.0.dist-info" in out and "sklearnomp-1.0.dist-info" in out


# --------------------------------------------------------------------------------------------
# where the environment is: a venv root, an interpreter's path (never run), this interpreter


def test_a_venv_root_its_interpreter_and_its_site_packages(venv):
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    results = []
    for target in (venv, venv / "bin" / "python", site):
        code, data = json_report("check", "--env", target, "--rules", RUNTIMES)
        assert code == 1
        assert Path(data["wheels"][0]["path"]) == site
        results.append(findings(data))
    assert results[0] == results[1] == results[2]
    assert sorted(f[:3] for f in results[0]) == [("WA201", "error", "openmp"), ("WA503", "error", "../../../bin/tool-bin")]
    assert not (venv.parent / "RAN").exists()  # the interpreter was never run


def test_this_interpreter_by_default():
    """No value: the running interpreter's site-packages (the test venv)."""
    import sysconfig

    _code, data = json_report("check", "--env", "--select", "WA5")
    assert Path(data["wheels"][0]["path"]) == Path(sysconfig.get_paths()["purelib"])
    names = {Path(m).name.removesuffix(".dist-info").rsplit("-", 1)[0] for m in data["wheels"][0]["members"]}
    assert {"pytest", "packaging"} <= names


def test_scripts_stay_in_the_prefix(wheels, venv, sites):
    """A venv's RECORD names scripts above site-packages (../../../bin/tool-bin): a file of the
    install, read and named so. In a `pip install --target` folder the same RECORD path leaves
    the folder: not read, with a note."""
    _code, data = json_report("check", wheels["tool"], "--select", "WA503")
    assert [f["paths"] for f in data["wheels"][0]["findings"]] == [["tool-1.0.data/scripts/tool-bin"]]
    _code, data = json_report("check", "--env", venv, "--select", "WA503")
    assert [f["paths"] for f in data["wheels"][0]["findings"]] == [["../../../bin/tool-bin"]]
    code, out, err = wheelaudit("check", "--env", sites["missing"], "--select", "WA503")
    assert code == 0, out + err
    assert "note: tool-1.0.dist-info: 1 RECORD path outside the install prefix" in out
    assert "../../bin/tool-bin" in out


# --------------------------------------------------------------------------------------------
# what RECORD says and the disk does not


def test_a_file_listed_but_not_installed_is_wa002(sites, tmp_path):
    site = site_copy(sites, "linux", tmp_path)
    (site / "torch" / "lib" / "libc10.so").unlink()
    (site / "common" / "config.py").unlink()
    code, data = json_report("check", "--env", site, "--select", "WA002")
    assert code == 1
    wa002 = [f for f in data["wheels"][0]["findings"] if "not installed" in f["message"]]
    assert sorted((f["subject"], f["paths"]) for f in wa002) == [
        ("alpha-1.0.dist-info/RECORD", ["common/config.py"]), ("beta-1.0.dist-info/RECORD", ["common/config.py"]),
        ("torch-2.14.1.dist-info/RECORD", ["torch/lib/libc10.so"])]


def test_a_native_file_changed_after_install_is_wa002(sites, tmp_path):
    site = site_copy(sites, "linux", tmp_path)
    with open(site / "torch" / "lib" / "libtorch.so", "ab") as fh:
        fh.write(b"\0patched\0")
    code, data = json_report("check", "--env", site, "--select", "WA002")
    assert code == 1
    msgs = [f["message"] for f in data["wheels"][0]["findings"]]
    assert any("torch/lib/libtorch.so: hash" in m and "does not match RECORD" in m for m in msgs), msgs


@pytest.mark.parametrize("how", ["missing", "a link", "over its size limit", "omits the library"])
@pytest.mark.parametrize("fmt", ["text -q", "github", "sarif"])
def test_a_distribution_that_cannot_be_audited_is_wa002(sites, tmp_path, how, fmt):
    """What cannot be audited is a finding (exit 1) in every output, -q included, never a note
    alone and never a pass."""
    site = site_copy(sites, "linux", tmp_path)
    record = site / "sklearnomp-1.0.dist-info" / "RECORD"
    if how == "missing":
        record.unlink()
    elif how == "a link":
        record.rename(tmp_path / "RECORD")
        record.symlink_to(tmp_path / "RECORD")
    elif how == "over its size limit":
        with open(record, "r+b") as fh:  # (sparse: no disk used)
            fh.truncate((64 << 20) + 1)
    else:
        record.write_text("".join(ln + "\n" for ln in record.read_text().splitlines() if ".so" not in ln))
    args = ["-q"] if fmt == "text -q" else ["--format", fmt]
    code, out, err = wheelaudit("check", "--env", site, "--rules", RUNTIMES, *args)
    assert code == 1, out + err
    if how == "omits the library":
        assert "no RECORD lists" in out and "sklearnomp" in out, out
    else:
        assert "sklearnomp-1.0.dist-info is not audited" in out, out
    assert "WA002" in out


@pytest.mark.parametrize("cfg", ["fifo", "/dev/zero", "sparse"])
def test_a_hostile_pyvenv_cfg_neither_blocks_nor_is_read_whole(sites, tmp_path, cfg):
    """The venv's pyvenv.cfg is a FIFO (a read would wait forever), a link to /dev/zero (endless)
    or a sparse file of 4 GiB: it is not read, and the run goes on (in a process of its own, so
    that a regression hangs that process, not the suite)."""
    import resource

    prefix = tmp_path / "venv"
    shutil.copytree(sites["linux"], prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages")
    if cfg == "fifo":
        os.mkfifo(prefix / "pyvenv.cfg")
    elif cfg == "/dev/zero":
        (prefix / "pyvenv.cfg").symlink_to("/dev/zero")
    else:
        with open(prefix / "pyvenv.cfg", "wb") as fh:
            fh.truncate(4 << 30)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    proc = subprocess.run([sys.executable, "-m", "wheelaudit", "check", "--env", str(prefix), "--select", "WA002"],
                          capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr and "linux" not in proc.stderr, proc.stderr


def test_two_versions_of_one_distribution(sites, tmp_path):
    site = site_copy(sites, "linux", tmp_path)
    old = site / "alpha-0.9.dist-info"
    shutil.copytree(site / "alpha-1.0.dist-info", old)
    (old / "METADATA").write_text("Metadata-Version: 2.1\nName: alpha\nVersion: 0.9\n\n")
    code, data = json_report("check", "--env", site, "--select", "WA002")
    assert code == 1
    twice = [f for f in data["wheels"][0]["findings"] if "installed twice" in f["message"]]
    assert [(f["subject"], f["paths"]) for f in twice] == [
        ("alpha-0.9.dist-info", ["alpha-0.9.dist-info/RECORD", "alpha-1.0.dist-info/RECORD"])]


def test_a_hostile_record_reads_nothing_outside(sites, tmp_path):
    """RECORD paths that leave the prefix, a FIFO, a directory, a RECORD that is not CSV: noted,
    never opened (a FIFO would block the read), and the audit goes on."""
    site = site_copy(sites, "linux", tmp_path)
    with open(site / "alpha-1.0.dist-info" / "RECORD", "a") as fh:
        fh.write("/etc/passwd,,\n../../../../../../etc/shadow,,\nalpha/pipe,,\nalpha,,\n")
    os.mkfifo(site / "alpha" / "pipe")
    (site / "junk-1.0.dist-info").mkdir()
    (site / "junk-1.0.dist-info" / "RECORD").write_bytes(b'"' + b"x" * 200_000 + b'",,\n')  # (over csv's field limit)
    code, out, err = wheelaudit("check", "--env", site, "--rules", RUNTIMES, "--select", "WA201,WA002")
    assert code == 1 and not err, err
    assert "note: alpha-1.0.dist-info: 2 RECORD paths outside the install prefix" in out
    assert "/etc/passwd" in out and "../../../../../../etc/shadow" in out
    assert "note: alpha-1.0.dist-info: 2 RECORD paths not a regular file (a link?) not read: alpha, alpha/pipe" in out
    assert "junk-1.0.dist-info is not audited" in out


def test_only_native_files_are_read(sites, tmp_path):
    """A pure-Python file is never opened: one that cannot be read changes nothing (a native one
    that cannot be read is reported)."""
    site = site_copy(sites, "linux", tmp_path)
    before = wheelaudit("check", "--env", site, "--format", "json")
    for p in site.rglob("*.py"):
        p.chmod(0)
    try:
        assert wheelaudit("check", "--env", site, "--format", "json") == before
        (site / "torch" / "lib" / "libtorch.so").chmod(0)
        code, out, _ = wheelaudit("check", "--env", site, "--format", "json")
    finally:
        for p in site.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
    if os.geteuid() != 0:  # (root reads a file whatever its mode)
        assert code == 1 and "libtorch.so" in out


# --------------------------------------------------------------------------------------------
# usage


def test_usage_errors(tmp_path, sites, wheels):
    assert wheelaudit("check", "--env", tmp_path / "nothing")[0] == 2
    code, _, err = wheelaudit("check", "--env", tmp_path)
    assert code == 2 and "neither a site-packages folder nor a venv" in err
    code, _, err = wheelaudit("check", "--env", sites["linux"], wheels["alpha"])
    assert code == 2 and "--env audits an installed environment on its own" in err
    assert wheelaudit("check", "--together", "--env", sites["linux"])[0] == 2
    code, _, err = wheelaudit("check")
    assert code == 2 and "or --env" in err
    python = tmp_path / "elsewhere" / "bin" / "python3.11"
    python.parent.mkdir(parents=True)
    python.write_text("")
    code, _, err = wheelaudit("check", "--env", python)
    assert code == 2 and "taken as an interpreter (it is not run)" in err
