import json

from services.ledger import categorize


def test_rules_match_case_insensitively():
    assert categorize.by_rules("AWS EMEA invoice 7781") == "hosting"
    assert categorize.by_rules("Uber *trip") == "travel"


def test_rules_return_none_for_unknown():
    assert categorize.by_rules("Office plants") is None


def test_llm_request_shape():
    req = categorize.llm_request("Office plants", {"office", "travel"})
    body = json.loads(req["body"])
    assert req["url"] == categorize.OPENAI_URL
    assert req["headers"]["Authorization"] == f"Bearer {categorize.OPENAI_API_KEY}"
    assert body["temperature"] == 0 and "['office', 'travel']" in body["messages"][0]["content"]
