//! Webhook URLs whose path holds the credential: anyone with the URL can
//! post as the integration, so the whole URL is the secret wherever it is
//! written, a name or none around it (a `const hook = '…'` in a serverless
//! function). Slack's are in `slack.rs`; here:
//! - Discord: `https://discord.com/api/webhooks/<snowflake id>/<token>`
//!   (also `discordapp.com`, the `canary.`/`ptb.` clients and versioned
//!   `api/v10/` paths), a 17-to-20-digit id and a 60-to-68-character
//!   URL-safe token.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
    name: "discord-webhook",
    secret_type: "discord_webhook",
    description: "Discord webhook URL (https://discord.com/api/webhooks/<id>/<token>)",
    keywords: &["/api/webhooks/", "/webhooks/"],
    pattern: r"(https://(?:(?:canary|ptb)\.)?discord(?:app)?\.com/api(?:/v[0-9]{1,2})?/webhooks/[0-9]{17,20}/([A-Za-z0-9_-]{60,68}))(?:[^A-Za-z0-9_-]|$)",
    group: 1,
    check_group: 2,
    context_type: None,
    validate: None,
    gate: None,
}];

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, rules};

    #[test]
    fn discord_webhooks_whole_wherever_written() {
        let url = "https://discord.com/api/webhooks/6636209221609069944/GYz_Dy0_ZVW5ZzXULyfYSgx59YgLkDtdXx1fK4hesiFe-SCVtNmWThdz3xOQ_3_liAe5";
        // A variable no credential word names, in a TypeScript function.
        let ts = format!("const hook = '{url}'\nawait fetch(hook, {{ method: 'POST' }})\n");
        assert!(
            rules("netlify/functions/contact.ts", &ts).contains(&format!("discord-webhook={url}")),
            "{:?}",
            rules("netlify/functions/contact.ts", &ts)
        );
        let old = "https://discordapp.com/api/v10/webhooks/48844868019413440/oJi2vsTgwNB9S_SL-NCoRakMczNrxE49K7fPepGAri7Gl2o-LTfBlan0AbXX1uDoJYhz";
        check("discord_webhook", &[(&format!("url: {old}"), old)], &[]);
        check(
            "discord_webhook",
            &[],
            &[
                (
                    "docs: https://discord.com/api/webhooks/<id>/<token>",
                    "placeholders",
                ),
                (
                    "url: https://discord.com/api/webhooks/123456789012345678/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                    "masked token",
                ),
                (
                    "see https://discord.com/api/webhooks/123456789012345678 for the id",
                    "no token",
                ),
            ],
        );
    }
}
