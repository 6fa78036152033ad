//! Slack bot/user/app tokens (xox?-) and incoming-webhook URLs.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "slack-token",
        secret_type: "slack_token",
        description: "Slack bot, user, app or legacy token (xox...)",
        keywords: &["xox"],
        pattern: r"\b(xox[abposre]-[0-9]{6,}-[A-Za-z0-9-]{8,250})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "slack-webhook",
        secret_type: "slack_webhook",
        description: "Slack incoming webhook URL",
        keywords: &["hooks.slack.com"],
        pattern: r"(https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9]{8,}/[A-Za-z0-9]{8,}/[A-Za-z0-9]{16,})",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
];

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn tokens_and_webhooks() {
        check(
            "slack_token",
            &[(
                "SLACK_BOT_TOKEN=xoxb-263594206564-2343594206574-FGqddMF8t5bGl6lXy7tbgBrq",
                "xoxb-263594206564-2343594206574-FGqddMF8t5bGl6lXy7tbgBrq",
            )],
            &[("token = \"xoxb-****\"", "masked")],
        );
        check(
            "slack_webhook",
            &[(
                "url: https://hooks.slack.com/services/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",
                "https://hooks.slack.com/services/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",
            )],
            &[("docs: https://hooks.slack.com/services/...", "elided path")],
        );
    }
}
