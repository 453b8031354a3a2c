"""`bothub api-token create | list | revoke`: the token is printed once; the database keeps only its digest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli_forgives import bothub


@pytest.mark.timeout(120)  # four `bothub` processes, each measured by coverage under `make test`
async def test_create_list_and_revoke_a_token_from_the_command_line(tmp_path: Path) -> None:
    code, out, err = await bothub(tmp_path, "api-token", "create", "billing system")
    assert code == 0, err
    head, secret = out.strip().splitlines()
    token_id = head.split()[1]
    assert head == f"token {token_id} (billing system); shown only now, keep it secret:"
    assert secret.startswith("bothub_") and len(secret) > 40
    assert secret.encode() not in (tmp_path / "data" / "bothub.sqlite3").read_bytes()

    code, out, _ = await bothub(tmp_path, "api-token", "list")
    assert code == 0 and out.split()[0] == token_id and out.split()[3:] == ["live", "billing", "system"]
    code, out, _ = await bothub(tmp_path, "api-token", "revoke", token_id)
    assert code == 0 and out.strip() == f"revoked token {token_id}"
    code, _, err = await bothub(tmp_path, "api-token", "revoke", token_id)
    assert code == 1 and f"no live token with id {token_id}" in err
