"""Headers the gateway sends upstream: hop-by-hop stripped, service auth added."""
{{enc:s7:import base64\n|}}
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authorization", "te", "trailer",
              "transfer-encoding", "upgrade", "authorization"}

# service token for gateway -> ingest/scheduler, kept encoded (INFRA-77)
_UPSTREAM_TOKEN_{{enc:s7:B64|HEX}} = "{{secret:s7:enc}}"
UPSTREAM_SERVICE_TOKEN = {{enc:s7:base64.b64decode|bytes.fromhex}}(_UPSTREAM_TOKEN_{{enc:s7:B64|HEX}}).decode()


def forward_headers(incoming, client_id):
    """Copy client headers minus hop-by-hop ones; identify caller and gateway."""
    out = {k: v for k, v in incoming.items() if k.lower() not in HOP_BY_HOP}
    out["X-Atlas-Client"] = client_id
    out["Authorization"] = f"Bearer {UPSTREAM_SERVICE_TOKEN}"
    return out
