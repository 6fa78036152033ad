//! Developer-platform credentials with an issuer prefix and a fixed body:
//! SonarQube/SonarCloud tokens (`squ_`/`sqp_`/`sqa_` + 40 hex), Doppler
//! tokens (`dp.pt.`, `dp.st.`, ... + 40-44 base-36), PlanetScale
//! (`pscale_tkn_`, `pscale_oauth_`, `pscale_pw_`), JFrog Artifactory API
//! keys (`AKCp` + 69 alphanumerics) and reference tokens (`cmVmd`, the
//! base64 of `ref`, + 59), 1Password account secret keys (`A3-` and five
//! or six dash-separated groups), age X25519 identities
//! (`AGE-SECRET-KEY-1` + 58 bech32 characters), and NATS nkey seeds.
//!
//! NATS nkey seeds (issue 18, generator-14 `nats-nkey-seed`): an nkey
//! seed is base32 (`A-Z2-7`, no padding) of a two-byte prefix, the 32-byte
//! Ed25519 seed and a CRC-16: 58 characters, the first `S` (the seed
//! prefix) and the second the key's role (`U` user, `A` account, `O`
//! operator, `N` server, `C` cluster, `X` curve). Whoever holds one signs
//! as that identity (a `.creds` file's `USER NKEY SEED` block, a
//! Kubernetes secret's `seed.nk`, `nkeys.FromSeed` in code). The public
//! keys (`U…`, `A…`, `O…`, `N…`: 56 characters) are what a server's
//! config lists and are not matched. The checksum is not required: a
//! hand-written seed in a fixture is as much a leak of the format as a
//! generated one, and the shape alone (58 base32 capitals after `S` and
//! a role letter) is met nowhere else. Gated by a word the text must
//! hold (`nkey`, `nats`, an nkey file's `.nk`): every place a seed is
//! used names one (`seed` alone is every random generator's word).
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "sonar-token",
        secret_type: "sonar_token",
        description: "SonarQube/SonarCloud user, project or analysis token (squ_/sqp_/sqa_)",
        keywords: &["squ_", "sqp_", "sqa_"],
        pattern: r"\b((?:squ|sqp|sqa)_[0-9a-f]{40})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "doppler-token",
        secret_type: "doppler_token",
        description: "Doppler personal, service, CLI, SCIM, audit or service-account token (dp.pt., dp.st., ...)",
        keywords: &[
            "dp.pt.",
            "dp.st.",
            "dp.ct.",
            "dp.scim.",
            "dp.audit.",
            "dp.sa.",
        ],
        pattern: r"\b(dp\.(?:pt|st|ct|scim|audit|sa)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "planetscale-token",
        secret_type: "planetscale_token",
        description: "PlanetScale API token, OAuth token or database password (pscale_tkn_, pscale_oauth_, pscale_pw_)",
        keywords: &["pscale_"],
        pattern: r"\b(pscale_(?:tkn|oauth|pw)_[A-Za-z0-9=._-]{32,64})",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "artifactory-api-key",
        secret_type: "artifactory_token",
        description: "JFrog Artifactory API key (AKCp...) or reference token (cmVmd...)",
        keywords: &["akcp", "cmvmd"],
        pattern: r"\b(AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "1password-secret-key",
        secret_type: "onepassword_secret_key",
        description: "1Password account secret key (A3-XXXXXX-...)",
        keywords: &["a3-"],
        pattern: r"\b(A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "age-secret-key",
        secret_type: "age_secret_key",
        description: "age encryption identity (AGE-SECRET-KEY-1...)",
        keywords: &["age-secret-key-1"],
        pattern: r"\b(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})\b",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "nats-nkey-seed",
        secret_type: "nats_nkey_seed",
        description: "NATS nkey seed (S + role letter + 56 base32)",
        keywords: &["nkey", "nats", ".nk"],
        pattern: r"(?:^|[^A-Za-z0-9_])(S[UAONCX][A-Z2-7]{56})(?:[^A-Za-z0-9_]|$)",
        group: 1,
        check_group: 0,
        context_type: None,
        validate: None,
        gate: None,
    },
];

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, rules};

    #[test]
    fn sonar_doppler_planetscale() {
        check(
            "sonar_token",
            &[(
                "sonar.token=squ_3f9a1c7e5b2d4086af1e9c3b7d5a2f8e6c4b0a19",
                "squ_3f9a1c7e5b2d4086af1e9c3b7d5a2f8e6c4b0a19",
            )],
            &[
                (
                    "sonar.login=squ_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
                    "x-masked",
                ),
                ("the squ_ prefix marks user tokens", "prefix only"),
            ],
        );
        check(
            "doppler_token",
            &[(
                "DOPPLER_TOKEN=dp.st.prd.K8fQz2Lm4Rt6Yp0Wn3Xb7Vc9Ds1Ga5Hj8Ek2Mq4Tz",
                "dp.st.prd.K8fQz2Lm4Rt6Yp0Wn3Xb7Vc9Ds1Ga5Hj8Ek2Mq4Tz",
            )],
            &[(
                "dp.st.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "x-masked",
            )],
        );
        check(
            "planetscale_token",
            &[(
                "DATABASE_PASSWORD: pscale_pw_4=_z_vh_woo-n0fie76_kujok_1xf3tp",
                "pscale_pw_4=_z_vh_woo-n0fie76_kujok_1xf3tp",
            )],
            &[("pscale_pw_<your-password>", "placeholder")],
        );
    }

    #[test]
    fn artifactory_onepassword_age() {
        let akcp = "AKCp5jj7j9ep3lizm72ysbi0ynqe0myyarh1opa8gzwkqqjaj79nh1ucqpxoo09i1bdx7z46o";
        check(
            "artifactory_token",
            &[(&format!("X-JFrog-Art-Api: {akcp}"), akcp)],
            &[
                (
                    "key := AKCpXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
                    "x-masked",
                ),
                ("testAKCpwithinsomeirrelevantstring", "prefix inside a word"),
            ],
        );
        check(
            "onepassword_secret_key",
            &[(
                "OP_SECRET_KEY=A3-ASWWYB-798JRYLJVD4-23DC2-86TVM-H43EB",
                "A3-ASWWYB-798JRYLJVD4-23DC2-86TVM-H43EB",
            )],
            &[("A3-XXXXXX-XXXXXXXXXXX-XXXXX-XXXXX-XXXXX", "x-masked")],
        );
        let age = "AGE-SECRET-KEY-15FERYXHRDZ9M6Y09MR8WRERWZGJ6F8NTXVHXYRDLM5AAHN0T09NL4UJY86";
        check(
            "age_secret_key",
            &[(&format!("# key.txt\n{age}\n"), age)],
            &[(
                "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ",
                "one character repeated",
            )],
        );
    }

    /// NATS nkey seeds wherever a seed is used; public nkeys (56
    /// characters, no `S` prefix) and near misses are not seeds.
    #[test]
    fn nats_nkey_seeds() {
        let seed = "SUAKYRHVIOREXV7EUZTBHUHL7NUMHPMAS7QMDU3GTVUYUO7ZHJ2YYNTVHE";
        let account = "SAAGNWKWPCUOJFCQ4MJD4GTVOGO3SDQAEPPNAMXTNVJYVE3PB7EKWK6YQQ";
        assert_eq!((seed.len(), account.len()), (58, 58));
        check(
            "nats_nkey_seed",
            &[
                (
                    &format!(
                        "-----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"
                    ),
                    seed,
                ),
                (&format!("stringData:\n  user.nk: {seed}\n"), seed),
                (&format!("NATS_ACCOUNT_SEED={account}\n"), account),
                (
                    &format!("kp, _ := nkeys.FromSeed([]byte(\"{seed}\"))\n"),
                    seed,
                ),
            ],
            &[],
        );
        let short = &seed[..56];
        let odd_role = seed.replacen("SU", "SZ", 1);
        for fp in [
            // Public nkeys: what a server's config lists.
            "users = [ { nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4 } ]\n",
            "# nats operator: ODSKR7MYFQZ5MMAJ6FPMEEW7NR2PPVHIJXGROKCRLL4NBTDCTDDOOO6U\n",
            &format!("nkey seed: {short}\n"),
            &format!("nkey seed: {odd_role}\n"),
            &format!("nkey seed: {seed}QQ\n"),
        ] {
            assert!(
                !rules("nats/server.conf", fp)
                    .iter()
                    .any(|f| f.starts_with("nats-nkey-seed=")),
                "{fp}"
            );
        }
    }
}
