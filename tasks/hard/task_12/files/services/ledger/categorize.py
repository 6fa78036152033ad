"""Categorise bank transactions: cheap rules first, the LLM only for leftovers."""
import re

from shared.http import bearer, build_request

OPENAI_URL = "https://api.openai.com/v1/chat/completions"
OPENAI_MODEL = "gpt-4o-mini"
OPENAI_API_KEY = "{{secret:s1}}"

RULES = [
    (re.compile(r"\b(aws|gcp|azure|heroku)\b", re.I), "hosting"),
    (re.compile(r"\b(uber|lyft|taxi|rail)\b", re.I), "travel"),
    (re.compile(r"\bpayroll\b", re.I), "salaries"),
]


def by_rules(description):
    for pattern, category in RULES:
        if pattern.search(description):
            return category
    return None


def llm_request(description, categories):
    """Chat-completions request asking the model to pick one category."""
    prompt = (f"Pick exactly one category from {sorted(categories)} for this bank "
              f"transaction and answer with the category only: {description!r}")
    body = {"model": OPENAI_MODEL, "temperature": 0,
            "messages": [{"role": "user", "content": prompt}]}
    return build_request("POST", OPENAI_URL, bearer(OPENAI_API_KEY), body)
