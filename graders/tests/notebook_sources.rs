//! Keys set in a Jupyter notebook's code cells (issue 18, generator-7
//! `notebook-source-key`): a cell's `source` is a JSON array of strings,
//! so the code's quotes are escaped (`"os.environ[\"HF_TOKEN\"] = \"…\"\n"`)
//! and the assignment's key and value sit between backslashes. A scan
//! reports them as it would the unescaped code; the notebook's own
//! metadata, ids and embedded images stay quiet.

use graders::scanner::{ScanConfig, Scanner};

fn notebook(lines: &[&str]) -> String {
    let src: Vec<String> = lines
        .iter()
        .map(|l| serde_json::to_string(&format!("{l}\n")).unwrap())
        .collect();
    format!(
        "{{\n \"cells\": [\n  {{\n   \"cell_type\": \"code\",\n   \"execution_count\": 1,\n   \"id\": \"04c1b767\",\n   \"metadata\": {{}},\n   \"outputs\": [],\n   \"source\": [\n    {}\n   ]\n  }}\n ],\n \"metadata\": {{\"kernelspec\": {{\"name\": \"python3\"}}}},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}}\n",
        src.join(",\n    ")
    )
}

fn values(text: &str) -> Vec<String> {
    Scanner::new(ScanConfig::default())
        .scan_bytes("notebooks/nightly.ipynb", text.as_bytes())
        .into_iter()
        .map(|f| f.value)
        .collect()
}

#[test]
fn keys_in_escaped_code_cells_are_reported() {
    for (line, want) in [
        (
            "os.environ[\"WAREHOUSE_API_KEY\"] = \"Zq8v2Lm4Kp7RtX9wB3nY6cQ1dF5h\"",
            "Zq8v2Lm4Kp7RtX9wB3nY6cQ1dF5h",
        ),
        ("DB_PASSWORD = \"k7#Rq2!vLx9@Tm4p\"", "k7#Rq2!vLx9@Tm4p"),
        (
            "BOT = \"7213808860:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM\"",
            "7213808860:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM",
        ),
        (
            "client = Client(token=\"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\")",
            "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",
        ),
    ] {
        let nb = notebook(&["import os", line]);
        let got = values(&nb);
        assert!(
            got.iter().any(|v| v == want),
            "missed {want} in {nb}: {got:?}"
        );
    }
}

#[test]
fn lookups_and_cell_metadata_are_quiet() {
    for line in [
        "os.environ[\"WAREHOUSE_API_KEY\"] = os.getenv(\"VAULT_KEY\")",
        "api_key = getpass.getpass(\"API key: \")",
        "token = os.environ[\"HF_TOKEN\"]",
        "run_id = \"9fK2mQ7xL4pR8sV1wZ3bT6yU0\"",
    ] {
        let nb = notebook(&["import os", line]);
        let got = values(&nb);
        assert!(got.is_empty(), "false positive in {nb}: {got:?}");
    }
}
