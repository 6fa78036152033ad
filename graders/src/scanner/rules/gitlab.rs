//! GitLab tokens. Since GitLab 14.5 every token type carries its own
//! prefix (`glpat-` personal access, `gldt-` deploy, `glrt-` runner
//! authentication, `glcbt-` CI job, `glptt-` pipeline trigger, `glft-`
//! feed, `glimt-` incoming mail, `glagent-` Kubernetes agent, `gloas-`
//! OAuth application secret, `glsoat-` SCIM, `glffct-` feature-flag
//! client) and runner registration tokens start `GR1348941`. The body is
//! `[0-9A-Za-z_-]` with per-type lengths; routable tokens (GitLab 17.x)
//! append `.` and a base-36 part.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[RuleDef {
    name: "gitlab-token",
    secret_type: "gitlab_token",
    description: "GitLab token with a type prefix (glpat-, gldt-, glrt-, glcbt-, glptt-, gloas-, GR1348941, ...)",
    keywords: &[
        "glpat-",
        "gldt-",
        "glrt-",
        "glcbt-",
        "glptt-",
        "glft-",
        "glimt-",
        "glagent-",
        "gloas-",
        "glsoat-",
        "glffct-",
        "gr1348941",
    ],
    // Body lengths per type as GitLab issues them (detect-secrets' GitLab
    // plugin uses the same bounds); a token runs to a non-token character,
    // so a longer run of token characters is something else.
    pattern: r"\b((?:glpat|glrt)-[0-9A-Za-z_-]{27,300}\.[0-9a-z]{9}|(?:glpat|gldt|glft|glsoat|glrt|glffct)-[0-9A-Za-z_-]{20,50}|glcbt-(?:[0-9a-fA-F]{1,5}_)?[0-9A-Za-z_-]{20,50}|glimt-[0-9A-Za-z_-]{25}|glptt-[0-9A-Za-z_-]{40}|glagent-[0-9A-Za-z_-]{50,1024}|gloas-[0-9A-Za-z_-]{64}|GR1348941[0-9A-Za-z_-]{20,50})(?:[^0-9A-Za-z_-]|$)",
    group: 1,
    check_group: 0,
    context_type: None,
    validate: None,
    gate: None,
}];

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn gitlab_tokens() {
        check(
            "gitlab_token",
            &[
                (
                    "GITLAB_TOKEN=glpat-2ccveo124phzdxjfeumq",
                    "glpat-2ccveo124phzdxjfeumq",
                ),
                (
                    "curl -H \"PRIVATE-TOKEN: glpat-mht580ppeu7gmjxg99ntky1jwh6.td5to2787\" $API",
                    "glpat-mht580ppeu7gmjxg99ntky1jwh6.td5to2787",
                ),
                (
                    "runner: glrt-t2_wlxg4uf873uwxws4xgpz3dc7utq.weeckobdt",
                    "glrt-t2_wlxg4uf873uwxws4xgpz3dc7utq.weeckobdt",
                ),
                (
                    "trigger glptt-fd412fa67ba7a78f4cb889ba6c18766dff2caa0c now",
                    "glptt-fd412fa67ba7a78f4cb889ba6c18766dff2caa0c",
                ),
                (
                    "registration-token: GR13489415amcheuwvvcwotmsw8kn",
                    "GR13489415amcheuwvvcwotmsw8kn",
                ),
            ],
            &[
                ("glpat-XXXXXXXXXXX-XXXXXXXX", "x-masked"),
                (
                    "see glpat-hellOWorld380 testin",
                    "body cut short by a space",
                ),
                (
                    "token glpat_hellOworld380_testin",
                    "underscore is not the prefix",
                ),
                ("gldt-seems_too000Sshorty", "under the 20-character body"),
                ("glptt-Zq8v2Lm4Rt6Yp0", "pipeline trigger tokens have 40"),
                (
                    "glimt-my-tokens_are-correctAB38_280",
                    "incoming-mail tokens have exactly 25",
                ),
                ("GR134894112312312312312312312", "a repeated block"),
                ("GR1348941XXXXXXXXXXXXXXXXXXXX", "x-masked"),
            ],
        );
    }
}
