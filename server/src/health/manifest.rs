//! Recording the pristine test manifest: the denominator of the score.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, bail};
use graders::junit::{self, Outcome};

use super::HealthGrader;
use graders::health_score::{
    ExpectedTests, check_report, check_verdicts, is_credential_flow_test, tamper_error,
};

impl HealthGrader {
    /// Records the manifest from the pristine workspace, run exactly as
    /// [`HealthGrader::grade_linted_timed`] runs (same copy, cleanup and restore).
    ///
    /// Every test must pass except the credential-flow tests (node ids
    /// containing `credential`, see [`is_credential_flow_test`]): those
    /// assert that the app uses exactly the fresh per-run credentials the
    /// pristine conftest exports, so they fail on the unfixed tree, which
    /// uses the planted values. Any other pristine failure, and any skip or
    /// error, is a task bug. That the whole suite can pass is proven by the
    /// oracle (`tests/oracle.rs`, health 1.0 on every task and seeds 1–3).
    pub async fn expected_tests(
        &self,
        workspace: &Path,
        pristine_dir: &Path,
    ) -> anyhow::Result<ExpectedTests> {
        let prepared = self
            .prepare(workspace, pristine_dir)
            .await
            .map_err(anyhow::Error::msg)?;
        let (run, canary) = self
            .run_pytest(prepared)
            .await
            .context("running pytest in the sandbox")?;
        if run.timed_out {
            bail!("pristine pytest run timed out after {:?}", self.limits.wall);
        }
        if let Some(e) = tamper_error(&run) {
            bail!("pristine run: {e}");
        }
        let bytes = run.report.clone().map_err(anyhow::Error::msg)?;
        let report = junit::parse_junit(&bytes).context("parsing the pristine JUnit report")?;
        check_report(&report, run.exit_code).map_err(anyhow::Error::msg)?;
        check_verdicts(&run, &report).map_err(|e| anyhow::anyhow!("pristine run: {e}"))?;
        let canary = &canary;
        let bad: Vec<String> = report
            .cases
            .iter()
            .filter(|c| {
                !canary.owns(c)
                    && c.outcome != Outcome::Passed
                    && !(c.outcome == Outcome::Failed && is_credential_flow_test(&c.key()))
            })
            .map(|c| c.key())
            .collect();
        if !bad.is_empty() {
            bail!("pristine tests do not all pass: {}", bad.join(", "));
        }
        // The suite must collect the canary (same directory, same naming
        // as one of its modules), or every later run would read as
        // tampered: a task whose collection rules exclude it is a task bug.
        canary.verify(&report).map_err(|e| {
            anyhow::anyhow!(
                "the pristine run does not collect the health canary {}: {e}",
                canary.rel.display()
            )
        })?;
        // The canary's one failure is the only one: pytest exits 1.
        let suite = report.cases.iter().filter(|c| !canary.owns(c)).count();
        if run.exit_code != Some(1) || suite == 0 {
            bail!(
                "pristine pytest run collected no passing tests (exit code {:?})",
                run.exit_code
            );
        }
        let names: BTreeSet<String> = report
            .cases
            .iter()
            .filter(|c| !canary.owns(c))
            .map(|c| c.key())
            .collect();
        let names: Vec<String> = names.into_iter().collect();
        let total = u32::try_from(names.len()).context("too many tests")?;
        Ok(ExpectedTests { names, total })
    }
}
