//! Walking a SPIR-V module's instructions, for the tests' and the bench's small reflections.

/// The instructions of a SPIR-V module after its five-word header, each as its opcode and its
/// words (the first word included, so operand `k` is `w[k]`). The walk stops at a word count of
/// zero or one that runs past the end.
pub fn instructions(words: &[u32]) -> impl Iterator<Item = (u32, &[u32])> {
    let mut i = 5;
    std::iter::from_fn(move || {
        let first = *words.get(i)?;
        let wc = (first >> 16) as usize;
        if wc == 0 || i + wc > words.len() {
            return None;
        }
        let w = &words[i..i + wc];
        i += wc;
        Some((first & 0xffff, w))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_until_a_malformed_word_count() {
        // Header, OpCapability Shader (2 words), OpMemoryModel (3 words), then a word count
        // running past the end.
        let words = [
            0x0723_0203,
            0x0001_0000,
            0,
            1,
            0,
            (2 << 16) | 17,
            1,
            (3 << 16) | 14,
            0,
            1,
            (4 << 16) | 71,
            7,
        ];
        let got: Vec<(u32, Vec<u32>)> = instructions(&words)
            .map(|(op, w)| (op, w.to_vec()))
            .collect();
        assert_eq!(
            got,
            vec![
                (17, vec![(2 << 16) | 17, 1]),
                (14, vec![(3 << 16) | 14, 0, 1]),
            ]
        );
        assert_eq!(instructions(&words[..3]).count(), 0);
        assert_eq!(instructions(&[0, 0, 0, 0, 0, 0]).count(), 0);
    }
}
