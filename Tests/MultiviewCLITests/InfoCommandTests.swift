import HLS
import XCTest
@testable import GStreamer
@testable import MultiviewCLI

/// `multiview info`'s text for a discovered medium: one line per stream with what it has, and the language options
/// it offers to `play`. Pure: the `MediaInfo` is made here, not discovered.
final class InfoCommandTests: XCTestCase {
    private func stream(_ kind: MediaInfo.Stream.Kind, _ codec: String, width: Int? = nil, height: Int? = nil,
                        fps: Double? = nil, channels: Int? = nil, rate: Int? = nil, bitrate: Int? = nil,
                        language: String? = nil) -> MediaInfo.Stream {
        MediaInfo.Stream(kind: kind, codec: codec, caps: "", width: width, height: height, frameRate: fps,
                         channels: channels, sampleRate: rate, bitrate: bitrate, language: language)
    }

    private func info(_ streams: [MediaInfo.Stream], duration: ClockTime? = .seconds(24), live: Bool = false,
                      container: String? = "Quicktime") -> MediaInfo {
        MediaInfo(uri: "file:///media/a.mp4", duration: duration, container: container, isSeekable: !live, isLive: live,
                  streams: streams, title: nil)
    }

    func testOneLinePerStreamWithWhatItHas() {
        let text = Info.format(info([
            stream(.video, "H.264 (High Profile)", width: 1280, height: 720, fps: 30, bitrate: 2_500_000),
            stream(.audio, "MPEG-4 AAC", channels: 2, rate: 48000, bitrate: 128_000),
            stream(.audio, "MPEG-4 AAC", channels: 1, rate: 44100),
        ]), name: "a.mp4")
        XCTAssertEqual(text, """
        a.mp4
          duration:  0:00:24.000
          container: Quicktime
          stream 0: video, H.264 (High Profile), 1280x720, 30 fps, 2500 kbit/s
          stream 1: audio, MPEG-4 AAC, 2 channels, 48000 Hz, 128 kbit/s
          stream 2: audio, MPEG-4 AAC, 1 channel, 44100 Hz
          audio languages: und (default), und  (--audio-lang, stdin: lang N audio LANG)
        """)
    }

    func testUnknownDurationLiveAndNoContainer() {
        let text = Info.format(info([stream(.video, "VP8", width: 640, height: 360, fps: 25)], duration: nil, live: true,
                                    container: nil), name: "http://host/live")
        XCTAssertEqual(text.split(separator: "\n").map(String.init), [
            "http://host/live", "  duration:  unknown (live)", "  container: none", "  stream 0: video, VP8, 640x360, 25 fps",
        ])
    }

    func testLanguageOptionsAreOfferedOnlyWhenThereIsAChoice() {
        XCTAssertEqual(LanguageOptions.optionLines(info([stream(.audio, "AAC")])), [], "one untagged track: no choice")
        XCTAssertEqual(LanguageOptions.optionLines(info([stream(.audio, "AAC", language: "en")])),
                       ["  audio languages: en (default)  (--audio-lang, stdin: lang N audio LANG)"])
        XCTAssertEqual(LanguageOptions.optionLines(info([
            stream(.audio, "AAC", language: "en"), stream(.audio, "AAC", language: "fr"),
            stream(.subtitle, "Timed Text", language: "en"), stream(.subtitle, "Timed Text"),
        ])), [
            "  audio languages: en (default), fr  (--audio-lang, stdin: lang N audio LANG)",
            "  subtitles: en, und, off  (--subtitles, stdin: subs N LANG|off)",
        ])
    }

    /// An HLS master: the discoverer said `application/x-hls` and `und, und`; the playlist declares en and fr.
    func testAnHLSMasterTakesItsLanguagesAndVariantsFromThePlaylist() {
        let renditions = MediaRendition.parse("""
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="audio-en/index.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Francais",LANGUAGE="fr",DEFAULT=NO,URI="audio-fr/index.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=696401,RESOLUTION=640x360,AUDIO="aud"
            v360/index.m3u8
            """)
        XCTAssertEqual(renditions, [MediaRendition(type: "AUDIO", name: "English", language: "en", isDefault: true),
                                    MediaRendition(type: "AUDIO", name: "Francais", language: "fr", isDefault: false)])
        let discovered = info([stream(.video, "H.264", width: 640, height: 360, fps: 30), stream(.audio, "MPEG-4 AAC"),
                               stream(.audio, "MPEG-4 AAC")], container: "application/x-hls")
        let text = Info.format(Info.withPlaylist(discovered, variants: 4, renditions: renditions), name: "master.m3u8")
        XCTAssertTrue(text.contains("  container: HLS multi-variant playlist (4 variants)\n"), text)
        XCTAssertTrue(text.contains("  stream 2: audio, MPEG-4 AAC, language fr\n"), text)
        XCTAssertTrue(text.hasSuffix("  audio languages: en (default), fr  (--audio-lang, stdin: lang N audio LANG)"), text)
        XCTAssertFalse(text.contains("und"), text)
    }
}
