// The app's own settings that shape the shell: theme, zoom and the folded
// sidebar survive a restart (a second AppSettings on the same folder), bad
// values fall back or are clamped; presets are saved from a conversation's
// settings, replaced by name, removed, refused with a reason, and kept.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "settings/AppSettings.h"
#include "settings/ConversationPresets.h"

using namespace weir::desktop;

class SettingsTest : public QObject {
    Q_OBJECT

private slots:
    void appearanceIsKept() {
        QTemporaryDir dir;
        {
            AppSettings s(dir.path(), QString());
            QCOMPARE(s.theme(), QStringLiteral("system"));
            QCOMPARE(s.zoom(), 1.0);
            QVERIFY(!s.sidebarCollapsed());
            QSignalSpy themeSpy(&s, &AppSettings::themeChanged);
            s.setTheme(QStringLiteral("dark"));
            s.setTheme(QStringLiteral("dark"));  // no change, no signal
            QCOMPARE(themeSpy.count(), 1);
            s.setZoom(1.26);                      // rounded to 5 %
            QCOMPARE(s.zoom(), 1.25);
            s.setSidebarCollapsed(true);
            s.sync();
        }
        AppSettings again(dir.path(), QString());
        QCOMPARE(again.theme(), QStringLiteral("dark"));
        QCOMPARE(again.zoom(), 1.25);
        QVERIFY(again.sidebarCollapsed());
    }

    void badAppearanceValues() {
        QTemporaryDir dir;
        AppSettings s(dir.path(), QString());
        s.setTheme(QStringLiteral("purple"));
        QCOMPARE(s.theme(), QStringLiteral("system"));
        s.setZoom(50);
        QCOMPARE(s.zoom(), AppSettings::kZoomMax);
        s.setZoom(0.01);
        QCOMPARE(s.zoom(), AppSettings::kZoomMin);
        s.setZoom(std::numeric_limits<double>::quiet_NaN());
        QCOMPARE(s.zoom(), AppSettings::kZoomMin);  // ignored
    }

    void presetsAreSavedReplacedAndRemoved() {
        QTemporaryDir dir;
        {
            AppSettings s(dir.path(), QString());
            ConversationPresets* p = s.presets();
            QSignalSpy changed(p, &ConversationPresets::changed);
            const QVariantMap coder{{"systemPrompt", "You write C++."}, {"temperature", 0.2}, {"topP", 0.9},
                                    {"topK", 20},  {"minP", 0.1},  {"repeatPenalty", 1.15},
                                    {"maxTokens", 512}, {"seed", 7}};
            QCOMPARE(p->save(QStringLiteral("  Coder "), coder), QString());
            QCOMPARE(p->save(QStringLiteral("brainstorm"), {{"temperature", 1.3}}), QString());
            QCOMPARE(changed.count(), 2);
            QCOMPARE(p->names(), (QStringList{QStringLiteral("brainstorm"), QStringLiteral("Coder")}));
            const QVariantMap got = p->preset(QStringLiteral("Coder"));
            QCOMPARE(got.value("systemPrompt").toString(), QStringLiteral("You write C++."));
            QCOMPARE(got.value("minP").toDouble(), 0.1);
            QCOMPARE(got.value("repeatPenalty").toDouble(), 1.15);
            QCOMPARE(got.value("maxTokens").toInt(), 512);
            QVERIFY(!got.contains("seed"));  // a preset starts conversations; it does not fix their seed
            // Same name: replaced, not duplicated.
            QCOMPARE(p->save(QStringLiteral("Coder"), {{"temperature", 0.0}}), QString());
            QCOMPARE(p->names().size(), 2);
            QCOMPARE(p->preset(QStringLiteral("Coder")).value("temperature").toDouble(), 0.0);
            QVERIFY(!p->preset(QStringLiteral("Coder")).contains("systemPrompt"));
            // Refused with a reason, nothing stored.
            QVERIFY(p->save(QStringLiteral("   "), coder).contains(QStringLiteral("name")));
            const QString bad = p->save(QStringLiteral("broken"), {{"topK", "many"}});
            QVERIFY2(bad.contains(QStringLiteral("topK")) && bad.contains(QStringLiteral("many")), qPrintable(bad));
            QVERIFY(!p->contains(QStringLiteral("broken")));
            // A name with slashes and brackets is just a name.
            QCOMPARE(p->save(QStringLiteral("a/b [x]"), {{"topP", 0.5}}), QString());
            QVERIFY(p->contains(QStringLiteral("a/b [x]")));
            p->remove(QStringLiteral("brainstorm"));
            QVERIFY(p->preset(QStringLiteral("brainstorm")).isEmpty());
            s.sync();
        }
        AppSettings again(dir.path(), QString());
        QCOMPARE(again.presets()->names(), (QStringList{QStringLiteral("a/b [x]"), QStringLiteral("Coder")}));
        QCOMPARE(again.presets()->preset(QStringLiteral("a/b [x]")).value("topP").toDouble(), 0.5);
    }
};

QTEST_MAIN(SettingsTest)
#include "settings_test.moc"
