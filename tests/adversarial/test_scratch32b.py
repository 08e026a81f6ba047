from pathlib import Path
from tests.adversarial.conftest import Pf
from tests.adversarial.gcp_endpoint import gcp
from tests.gcp.fake_cloud import FakeCloud, HttpFault
__all__ = ["gcp"]

def show(tag, r):
    print(tag, "rc", r.returncode, r.stdout[-1500:], "\nSTDERR\n", r.stderr[-1500:])

U = HttpFault(401, "authError", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")

def test_scratch(pf: Pf, gcp: tuple[Path, FakeCloud]) -> None:
    config, cloud = gcp
    assert pf("apply", config, "--auto-approve").returncode == 0
    pools = config / "machine-pool.yaml"
    pools.write_text(pools.read_text().replace("size: 2", "size: 3"))
    plan = config.parent / "plan.bin"
    assert pf("plan", config, "-out", plan).returncode == 0
    cloud.fail("regionInstanceGroupManagers.list", U)
    show("APPLYBIN", pf("apply", "--chdir", config, plan))
    assert False
