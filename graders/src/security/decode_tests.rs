use super::*;

fn layers(data: &[u8]) -> Vec<Layer> {
    let mut v = Vec::new();
    text_layers(data, &mut |l| v.push(l));
    v
}

fn has(data: &[u8], want: &[u8], how: &str) -> bool {
    layers(data)
        .iter()
        .any(|l| l.how.starts_with(how) && l.data.windows(want.len()).any(|w| w == want))
}
