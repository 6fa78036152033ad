//! Google API keys (AIza...), reported as Firebase keys when "firebase"
//! appears shortly before the key or in the path; and FCM server keys.
use super::RuleDef;

pub(super) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "google-api-key",
        secret_type: "google_api_key",
        description: "Google API key (AIza...)",
        keywords: &["aiza"],
        pattern: r"\b(AIza[0-9A-Za-z_\-]{35})(?:[^0-9A-Za-z_\-]|$)",
        group: 1,
        check_group: 0,
        context_type: Some(("firebase", "firebase_api_key")),
        validate: None,
        gate: None,
    },
    RuleDef {
        name: "firebase-fcm-server-key",
        secret_type: "firebase_api_key",
        description: "Firebase Cloud Messaging server key (AAAA...:APA91b...)",
        keywords: &["aaaa"],
        pattern: r"\b(AAAA[A-Za-z0-9_\-]{7}:[A-Za-z0-9_\-]{140})",
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
    fn google_and_firebase() {
        check(
            "google_api_key",
            &[(
                "MAPS_KEY=AIzaSyD4k9Qz2Lm7Np3Rt8Vw1Xy6Zb0Cd5Ef2Gh",
                "AIzaSyD4k9Qz2Lm7Np3Rt8Vw1Xy6Zb0Cd5Ef2Gh",
            )],
            &[("key = 'AIza...'", "elided")],
        );
        check(
            "firebase_api_key",
            &[(
                "const firebaseConfig = {\n  apiKey: \"AIzaSyB7xQ2kL9mN4pR6sT8vW0yZ3aC5eG7iK1o\",\n};",
                "AIzaSyB7xQ2kL9mN4pR6sT8vW0yZ3aC5eG7iK1o",
            )],
            &[(
                "apiKey: \"AIzaSyXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\" // firebase",
                "x-masked",
            )],
        );
    }
}
