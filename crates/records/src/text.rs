//! The text of a record file in whatever encoding it was written: KIF and KI2 are
//! Shift_JIS (CP932) by their definition (`.kifu` and `.ki2u` UTF-8), CSA files from
//! Windows tools often are, and older ones EUC-JP. The decoding is `encoding_rs`'s (the
//! WHATWG encodings); this module only decides which one a file is in.

use encoding_rs::{EUC_JP, Encoding, SHIFT_JIS, UTF_8};

/// A record file's text and the encoding it was read in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedText {
    /// The text, without a byte order mark.
    pub text: String,
    /// The encoding's name: `UTF-8`, `Shift_JIS` (read as Windows' CP932, the superset
    /// every Japanese Windows tool writes), `EUC-JP`, or one an encoding line named.
    pub encoding: &'static str,
    /// The encoding an encoding line named where the bytes are not in it (a file
    /// converted without its line changed, or a tool that writes the wrong one): the
    /// text was read as if the line were not there.
    pub line_named: Option<&'static str>,
}

impl DecodedText {
    /// What a report says of how the file was read: `Shift_JIS`, or `UTF-8, not the
    /// Shift_JIS its encoding line names`.
    pub fn describe(&self) -> String {
        match self.line_named {
            Some(named) => format!("{}, not the {named} its encoding line names", self.encoding),
            None => self.encoding.to_string(),
        }
    }
}

/// Decodes a record file's bytes. In order: a UTF-8 byte order mark; valid UTF-8; an
/// encoding line in the first lines (KIF `#KIF version=2.0 encoding=Shift_JIS`, CSA
/// `'encoding=Shift_JIS`) where the bytes are valid in it; then Shift_JIS or EUC-JP,
/// whichever decodes without an error and reads as Japanese text rather than half-width
/// katakana (a Shift_JIS decoder accepts most EUC-JP bytes as such), Shift_JIS when both
/// do. Valid UTF-8 wins over a line because Japanese in Shift_JIS or EUC-JP is in
/// practice never valid UTF-8 (their kana and most kanji start with bytes UTF-8 uses
/// only inside a character) while UTF-8 often decodes as Shift_JIS, into other
/// characters, without an error;
/// a line the bytes do not hold to is named ([`DecodedText::line_named`]): real files
/// say `encoding=UTF-8` in Shift_JIS, and a file converted by `iconv` keeps its old line.
pub fn decode_record_text(bytes: &[u8]) -> Result<DecodedText, String> {
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return decode_as(UTF_8, rest, "its byte order mark");
    }
    let declared = declared_encoding(bytes);
    if let Ok(text) = std::str::from_utf8(bytes) {
        // ASCII reads the same in all of them: only non-ASCII text contradicts a line.
        let contradicts = |named: &&'static Encoding| *named != UTF_8 && !text.is_ascii();
        return Ok(DecodedText {
            text: text.to_string(),
            encoding: "UTF-8",
            line_named: declared.filter(contradicts).map(Encoding::name),
        });
    }
    if let Some(encoding) = declared {
        let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
        if !had_errors {
            return Ok(DecodedText {
                text: text.into_owned(),
                encoding: encoding.name(),
                line_named: None,
            });
        }
    }
    let mut detected = detect(bytes)?;
    detected.line_named = declared.map(Encoding::name);
    Ok(detected)
}

/// Shift_JIS or EUC-JP, for bytes that are not UTF-8 and do not say their encoding
/// ([`decode_record_text`]).
fn detect(bytes: &[u8]) -> Result<DecodedText, String> {
    let mut best: Option<(usize, DecodedText)> = None;
    for encoding in [SHIFT_JIS, EUC_JP] {
        let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
        if had_errors {
            continue;
        }
        let halfwidth = text
            .chars()
            .filter(|c| ('\u{FF61}'..='\u{FF9F}').contains(c))
            .count();
        if best.as_ref().is_none_or(|(fewest, _)| halfwidth < *fewest) {
            best = Some((
                halfwidth,
                DecodedText {
                    text: text.into_owned(),
                    encoding: encoding.name(),
                    line_named: None,
                },
            ));
        }
    }
    best.map(|(_, decoded)| decoded)
        .ok_or_else(|| "not text in UTF-8, Shift_JIS (CP932) or EUC-JP".to_string())
}

fn decode_as(encoding: &'static Encoding, bytes: &[u8], why: &str) -> Result<DecodedText, String> {
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    if had_errors {
        return Err(format!(
            "not valid {} text, the encoding {why} names",
            encoding.name()
        ));
    }
    Ok(DecodedText {
        text: text.into_owned(),
        encoding: encoding.name(),
        line_named: None,
    })
}

/// The encoding an encoding line in the first 30 lines names (ASCII in every encoding
/// these files use), if any and if `encoding_rs` knows its label.
fn declared_encoding(bytes: &[u8]) -> Option<&'static Encoding> {
    for line in bytes.split(|&b| b == b'\n').take(30) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(at) = find(line, b"encoding=") else {
            continue;
        };
        let label: Vec<u8> = line[at + b"encoding=".len()..]
            .iter()
            .copied()
            .take_while(|b| !b.is_ascii_whitespace() && *b != b',')
            .collect();
        // CP932 and Windows-31J are what Windows tools call Shift_JIS.
        let label = match label.to_ascii_lowercase().as_slice() {
            b"cp932" | b"windows-31j" | b"ms932" | b"sjis" => b"shift_jis".to_vec(),
            _ => label,
        };
        return Encoding::for_label(&label);
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A KIF text as its file is written: Shift_JIS (CP932) with the `.kif` extension, as
/// the format defines and Kifu for Windows, ShogiHome and Shogidokoro read it, where
/// the text reads back the same from Shift_JIS; else UTF-8 with `.kifu`. Some
/// characters have a Shift_JIS code that reads back as another (`¥` is written as the
/// byte of `\`, `−` as the code of `－`), so encoding without an error is not enough.
pub fn kif_file(text: &str) -> KifFile {
    let (bytes, _, unmappable) = SHIFT_JIS.encode(text);
    let (back, _) = SHIFT_JIS.decode_without_bom_handling(&bytes);
    if unmappable || back != text {
        KifFile {
            extension: "kifu",
            encoding: UTF_8.name(),
            bytes: text.as_bytes().to_vec(),
        }
    } else {
        KifFile {
            extension: "kif",
            encoding: SHIFT_JIS.name(),
            bytes: bytes.into_owned(),
        }
    }
}

/// What [`kif_file`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KifFile {
    /// `kif` or `kifu`.
    pub extension: &'static str,
    /// `Shift_JIS` or `UTF-8`.
    pub encoding: &'static str,
    pub bytes: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> DecodedText {
        decode_record_text(bytes).unwrap()
    }

    const KIF: &str = "手合割：平手\n先手：羽生善治\n後手：Ⅷ世名人\n手数----指手---------消費時間--\n   1 ７六歩(77)\n";

    #[test]
    fn each_encoding_is_read_and_named() {
        let (sjis, _, unmappable) = SHIFT_JIS.encode(KIF);
        assert!(!unmappable, "Ⅷ is a CP932 character");
        let (euc, _, unmappable) = EUC_JP.encode("手合割：平手\n先手：羽生善治\n   1 ７六歩(77)\n");
        assert!(!unmappable);
        let got = decode(&sjis);
        assert_eq!((got.text.as_str(), got.encoding), (KIF, "Shift_JIS"));
        let got = decode(&euc);
        assert_eq!(got.encoding, "EUC-JP");
        assert!(got.text.starts_with("手合割：平手"), "{}", got.text);
        let got = decode(KIF.as_bytes());
        assert_eq!((got.text.as_str(), got.encoding), (KIF, "UTF-8"));
        let mut bom = b"\xEF\xBB\xBF".to_vec();
        bom.extend_from_slice(KIF.as_bytes());
        assert_eq!(decode(&bom).text, KIF);
        // CRLF is kept for the readers, which take either.
        let crlf = KIF.replace('\n', "\r\n");
        let (sjis_crlf, _, _) = SHIFT_JIS.encode(&crlf);
        assert_eq!(decode(&sjis_crlf).text, crlf);
    }

    #[test]
    fn an_encoding_line_is_honoured_where_the_bytes_hold_to_it() {
        let text = "'encoding=Shift_JIS\nN+先手\n";
        let (sjis, _, _) = SHIFT_JIS.encode(text);
        assert_eq!(decode(&sjis).text, text);
        let text = "#KIF version=2.0 encoding=CP932\n先手：甲\n";
        let (sjis, _, _) = SHIFT_JIS.encode(text);
        assert_eq!(decode(&sjis).encoding, "Shift_JIS");
        // A line the bytes do not hold to is passed over and named: Shift_JIS under a
        // UTF-8 line (as real files have it), UTF-8 under a Shift_JIS line (a file
        // converted by iconv).
        let (sjis, _, _) = SHIFT_JIS.encode("#KIF version=2.0 encoding=UTF-8\n先手：甲\n");
        let got = decode(&sjis);
        assert_eq!(got.text, "#KIF version=2.0 encoding=UTF-8\n先手：甲\n");
        assert_eq!((got.encoding, got.line_named), ("Shift_JIS", Some("UTF-8")));
        assert_eq!(
            got.describe(),
            "Shift_JIS, not the UTF-8 its encoding line names"
        );
        // Valid Shift_JIS too, as other characters: UTF-8 wins.
        let converted = "'encoding=Shift_JIS\nN+先手ー\n";
        assert!(!SHIFT_JIS.decode(converted.as_bytes()).2);
        let got = decode(converted.as_bytes());
        assert_eq!(
            (got.text.as_str(), got.line_named),
            (converted, Some("Shift_JIS"))
        );
        // ASCII contradicts no line.
        assert_eq!(decode(b"'encoding=Shift_JIS\nN+abc\n").line_named, None);
        assert!(decode_record_text(b"'encoding=UTF-8\n\x81\x00\xff\xfe\x80").is_err());
    }

    /// Why valid UTF-8 is tried before Shift_JIS, `.kif` included, though the format
    /// defines `.kif` as Shift_JIS: UTF-8 Japanese often decodes as Shift_JIS without an
    /// error (into other characters), so a Shift_JIS-first rule would misread UTF-8
    /// `.kif` files, while Shift_JIS Japanese is never valid UTF-8 (its lead bytes
    /// 0x81-0x9F are UTF-8 continuation bytes), so this order reads both.
    #[test]
    fn utf8_is_tried_first_because_shift_jis_would_misread_it_silently() {
        let names = "先手 羽生善治\n後手 谷川浩司\n";
        let (misread, _, had_errors) = SHIFT_JIS.decode(names.as_bytes());
        assert!(
            !had_errors && misread != names,
            "UTF-8 read as Shift_JIS: {misread}"
        );
        assert_eq!(decode(names.as_bytes()).encoding, "UTF-8");
        assert_eq!(decode(KIF.as_bytes()).encoding, "UTF-8");
        for word in [
            "先手",
            "後手",
            "手合割",
            "平手",
            "まで",
            "投了",
            "同",
            "歩",
            "成",
        ] {
            let (sjis, _, _) = SHIFT_JIS.encode(word);
            assert!(
                std::str::from_utf8(&sjis).is_err(),
                "{word} in Shift_JIS is valid UTF-8"
            );
        }
    }

    #[test]
    fn bytes_of_no_encoding_are_refused_by_name() {
        let err = decode_record_text(b"\x81\x00\xff\xfe\x80").unwrap_err();
        assert!(err.contains("EUC-JP"), "{err}");
    }

    #[test]
    fn kif_is_written_in_shift_jis_where_it_can_be_and_reads_back() {
        let text = "先手：羽生善治\n   1 ７六歩(77)\n";
        let file = kif_file(text);
        assert_eq!((file.extension, file.encoding), ("kif", "Shift_JIS"));
        let back = decode_record_text(&file.bytes).unwrap();
        assert_eq!((back.text.as_str(), back.encoding), (text, "Shift_JIS"));
        // A name with no Shift_JIS code: UTF-8, as .kifu.
        let file = kif_file("先手：😀\n");
        assert_eq!((file.extension, file.encoding), ("kifu", "UTF-8"));
        assert_eq!(file.bytes, "先手：😀\n".as_bytes());
        // Characters Shift_JIS writes but reads back as others: UTF-8 too.
        for name in ["先手：¥100\n", "先手：A−B\n"] {
            let (_, _, unmappable) = SHIFT_JIS.encode(name);
            assert!(!unmappable, "{name} encodes without an error");
            assert_eq!(kif_file(name).extension, "kifu", "{name}");
        }
    }
}
