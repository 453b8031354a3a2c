"""Fake DingTalk Open Platform on 127.0.0.1 port 0, strict where the real one is.

OpenAPI (`x-acs-dingtalk-access-token`): accessToken with an expiry, AI cards (createAndDeliver, or create then
deliver as the SDK does; whole-card PUT, card/streaming), robot messages (oToMessages/batchSend,
groupMessages/send), message file download; the older API: media/upload (token in the query, errcode
answers); session webhooks, which expire (dingtalk_robot.py). Refusals
are HTTP 4xx with {"code", "message"} (OpenAPI) or {"errcode", "errmsg"}. Every call is recorded with its
time; DingTalk's limits are enforced and judged (budgets.py). The Stream gateway is dingtalk_gateway.py.

DingTalk's throttling page ("调用频次与限流", 应用维度QPS限流) counts an app's calls per interface: "每个应用，调用每个
接口，超过最高频率时，将会触发限流" (20 a second on the standard edition), refused with 403
Forbidden.AccessDenied.QpsLimitForAppkeyAndApi (errcode 90018 on the older API). A session webhook is no such
interface (no access token; its URL is the credential): only the per-group limit counts its messages.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.budgets import Judged, SlidingWindows
from tests.fakes.dingtalk_gateway import Gateway
from tests.fakes.dingtalk_robot import CLIENT_ID, TEXT_LIMIT, RobotMessages, Shown, refuse
from tests.fakes.serve import serve_local

CLIENT_SECRET = "ding-test-secret"
GROUP_PER_MINUTE = 20  # a robot's new messages into one group per minute
CARD_UPDATES_PER_SECOND = 10  # updates of one card (this fake's assumption; DingTalk publishes none)
APP_QPS = 20  # an internal app's calls per second to each server API (DingTalk's standard edition)
QPS_REFUSED = "Forbidden.AccessDenied.QpsLimitForAppkeyAndApi"  # HTTP 403, as DingTalk names the refusal


@dataclass
class Call:
    at: float
    method: str
    path: str
    body: Any
    headers: dict[str, str]


@dataclass
class Failure:
    path_part: str
    status: int
    code: str
    times: int | None


class FakeDingTalk(Gateway, RobotMessages, Judged):
    def __init__(self, client_id: str = CLIENT_ID, client_secret: str = CLIENT_SECRET) -> None:
        """`client_id` and `client_secret`: the app's (another robot beside the default, for a cloud)."""
        Gateway.__init__(self)
        RobotMessages.__init__(self)
        Judged.__init__(self)
        self.client_id, self.client_secret = client_id, client_secret
        self.token_secret = client_secret  # what accessToken checks (a test may make the gateway's differ)
        self.calls: list[Call] = []
        self.cards: dict[str, Shown] = {}
        self._pending: dict[str, dict[str, str]] = {}  # created, not yet delivered: outTrackId → cardParamMap
        self.shown_messages: list[Shown] = []
        self.token_lifetime = 7200
        self.issued_tokens: list[str] = []
        self._tokens: dict[str, float] = {}  # token → expiry (monotonic)
        self._failures: list[Failure] = []
        self._ids = itertools.count(1)
        self._group_window = SlidingWindows(GROUP_PER_MINUTE, 60.0)
        self._group_judge = SlidingWindows(GROUP_PER_MINUTE, 60.0)
        self._card_judge = SlidingWindows(CARD_UPDATES_PER_SECOND, 1.0)
        self.app_qps = APP_QPS  # a test that is not about it may raise it; per app and interface
        self.qps_clock: Callable[[], float] = time.monotonic  # a test may stop it to count calls in one second
        self._app_window = SlidingWindows(APP_QPS, 1.0, lambda: self.qps_clock())
        self._app_judge = SlidingWindows(APP_QPS, 1.0, lambda: self.qps_clock())
        self._runner: web.AppRunner | None = None
        self.port = 0

    # ---- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> None:
        app = web.Application(client_max_size=30 * 2**20)
        self.gateway_routes(app)
        app.router.add_post("/v1.0/oauth2/accessToken", self._token)
        self.robot_routes(app)
        app.router.add_route("*", "/v1.0/{tail:.*}", self._openapi)
        self._runner, self.port = await serve_local(app)

    async def stop(self) -> None:
        await self.stop_gateway()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- scripting -------------------------------------------------------------------------------
    def fail(self, path_part: str, status: int, code: str, times: int | None = 1) -> None:
        self._failures.append(Failure(path_part, status, code, times))

    def expire_tokens(self) -> None:
        self._tokens.clear()

    def calls_to(self, path_part: str) -> list[Call]:
        return [c for c in self.calls if path_part in c.path]

    def shown(self, chat_id: str) -> list[str]:
        return [m.content for m in self.shown_messages if m.chat_id == chat_id]

    # ---- handlers --------------------------------------------------------------------------------
    def record(self, request: web.Request, body: Any) -> None:
        self.calls.append(Call(time.monotonic(), request.method, request.path, body, dict(request.headers)))

    def over_qps(self, api: str) -> bool:
        """The app's calls to one interface within any second: judged, and refused beyond the limit."""
        if self._app_judge.over(api):
            self.breach("app QPS per API", f"{self.client_id} {api}")
        self._app_window.limit = self.app_qps
        return self._app_window.over(api)

    def scripted(self, path: str) -> web.Response | None:
        for failure in self._failures:
            if failure.path_part in path and failure.times != 0:
                if failure.times is not None:
                    failure.times -= 1
                headers = {"Retry-After": "1"} if failure.status == 429 else None
                return web.json_response({"code": failure.code, "message": "scripted refusal"},
                                         status=failure.status, headers=headers)
        return None

    async def _token(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.record(request, body)
        if (body.get("appKey"), body.get("appSecret")) != (self.client_id, self.token_secret):
            return refuse(400, "invalidClientIdOrSecret", "appKey or appSecret is wrong")
        token = f"at-{self.client_id}-{next(self._ids)}"
        self._tokens[token] = time.monotonic() + self.token_lifetime
        self.issued_tokens.append(token)
        return web.json_response({"accessToken": token, "expireIn": self.token_lifetime})

    def authorized(self, token: str) -> bool:
        return self._tokens.get(token, 0.0) > time.monotonic()

    async def _openapi(self, request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body else None
        self.record(request, body)
        if not self.authorized(request.headers.get("x-acs-dingtalk-access-token", "")):
            return refuse(401, "InvalidAuthentication", "access token is invalid or expired")
        scripted = self.scripted(request.path)
        if scripted is not None:
            return scripted
        route = (request.method, request.path)
        if self.over_qps(" ".join(route)):
            return refuse(403, QPS_REFUSED, "the app's calls per second to this API are over the limit")
        if not isinstance(body, dict):
            return refuse(400, "InvalidParameter", "a JSON object body is required")
        if route == ("POST", "/v1.0/card/instances/createAndDeliver"):
            return self._create_card(body)
        if route == ("POST", "/v1.0/card/instances"):
            return self._create_card(body, deliver=False)
        if route == ("POST", "/v1.0/card/instances/deliver"):
            return self._deliver_card(body)
        if route == ("PUT", "/v1.0/card/instances"):
            return self._put_card(body)
        if route == ("PUT", "/v1.0/card/streaming"):
            return self._stream_card(body)
        if route in (("POST", "/v1.0/robot/oToMessages/batchSend"), ("POST", "/v1.0/robot/groupMessages/send")):
            return self.robot_send(body)
        if route == ("POST", "/v1.0/robot/messageFiles/download"):
            code = body.get("downloadCode")
            if body.get("robotCode") != self.client_id or code not in self.files:
                return refuse(400, "invalidDownloadCode", "download code is invalid")
            return web.json_response({"downloadUrl": f"{self.base}/files/{code}"})
        return refuse(404, "NotFound", f"no such API {request.method} {request.path}")

    def new_message(self, chat_id: str, is_group: bool) -> web.Response | None:
        """DingTalk's per-group budget for a robot's new messages; refused beyond it, and judged."""
        if is_group and self._group_judge.over(chat_id):
            self.breach("per group", chat_id)
        if is_group and self._group_window.over(chat_id):
            return refuse(429, "Throttling", "robot send too fast, exceed 20 times per minute")
        return None

    def _create_card(self, body: dict[str, Any], *, deliver: bool = True) -> web.Response:
        """createAndDeliver (deliver=True), or the first of the SDK's two steps (card/instances)."""
        params = body.get("cardData", {}).get("cardParamMap")
        track = body.get("outTrackId")
        if not body.get("cardTemplateId"):
            return refuse(400, "InvalidParameter", "cardTemplateId is required")
        if not isinstance(track, str) or not track or track in self.cards or track in self._pending:
            return refuse(400, "param.outTrackId.duplicated", "outTrackId missing or already used")
        invalid = _invalid_params(params)
        if invalid:
            return refuse(400, "param.cardParamMap.invalid", invalid)
        self._pending[track] = dict(params)
        return self._deliver_card(body) if deliver else web.json_response({"success": True, "result": track})

    def _deliver_card(self, body: dict[str, Any]) -> web.Response:
        """Into a group (IM_GROUP, the robot named) or a robot's one-to-one chat (IM_ROBOT)."""
        track = str(body.get("outTrackId"))
        kind, _, chat_id = str(body.get("openSpaceId", "")).removeprefix("dtv1.card//").partition(".")
        model = body.get("imGroupOpenDeliverModel" if kind == "IM_GROUP" else "imRobotOpenDeliverModel")
        if track not in self._pending:
            return refuse(400, "param.outTrackId.notExist", "no created card with this outTrackId")
        if kind not in ("IM_GROUP", "IM_ROBOT") or not chat_id or not isinstance(model, dict):
            return refuse(400, "param.openSpaceId.invalid", "openSpaceId or its deliver model is invalid")
        if kind == "IM_GROUP" and model.get("robotCode") != self.client_id:
            return refuse(400, "InvalidParameter", "imGroupOpenDeliverModel.robotCode is required")
        refused = self.new_message(chat_id, kind == "IM_GROUP")
        if refused is not None:
            return refused
        card = Shown(chat_id, "card", self._pending.pop(track))
        self.cards[track] = card
        self.shown_messages.append(card)
        return web.json_response({"success": True, "result": {"outTrackId": track, "deliverResults": [
            {"spaceType": kind, "spaceId": chat_id, "success": True}]}})

    def _put_card(self, body: dict[str, Any]) -> web.Response:
        card = self.cards.get(str(body.get("outTrackId")))
        params = body.get("cardData", {}).get("cardParamMap")
        if card is None:
            return refuse(400, "param.outTrackId.notExist", "no card with this outTrackId")
        invalid = _invalid_params(params)
        if invalid:
            return refuse(400, "param.cardParamMap.invalid", invalid)
        self._judge_card(str(body["outTrackId"]))
        by_key = body.get("cardUpdateOptions", {}).get("updateCardDataByKey", False)
        card.params = {**card.params, **params} if by_key else dict(params)
        return web.json_response({"success": True, "result": True})

    def _stream_card(self, body: dict[str, Any]) -> web.Response:
        track = str(body.get("outTrackId"))
        card = self.cards.get(track)
        if card is None:
            return refuse(400, "param.outTrackId.notExist", "no card with this outTrackId")
        if not body.get("guid") or body.get("key") not in card.params or not isinstance(body.get("content"), str):
            return refuse(400, "InvalidParameter", "guid, an existing key and a content string are required")
        if card.params.get("flowStatus") != "2":
            return refuse(400, "card.streaming.finished", "the card is not in the inputting state")
        if len(body["content"]) > TEXT_LIMIT:
            return refuse(400, "param.content.tooLong", f"content longer than {TEXT_LIMIT}")
        self._judge_card(track)
        key = body["key"]
        card.params[key] = body["content"] if body.get("isFull") else card.params[key] + body["content"]
        if body.get("isFinalize"):
            card.params["flowStatus"] = "3"
        return web.json_response({"success": True})

    def _judge_card(self, track: str) -> None:
        if self._card_judge.over(track):
            self.breach("per card", track)

def _invalid_params(params: Any) -> str:
    """cardParamMap: string values only; the Markdown within the text limit."""
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        return "cardParamMap must map strings to strings"
    if len(params.get("msgContent", "")) > TEXT_LIMIT:
        return f"msgContent longer than {TEXT_LIMIT}"
    return ""
