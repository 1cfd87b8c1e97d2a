"""More seed material for the tokenizer corpus (see make_corpus.py): sentences in many
languages, alphabets of ~45 scripts (as explicit code-point ranges, so that the corpus does
not depend on the Unicode database of the Python that makes it), code snippets in many
languages, emoji building blocks, special-token spellings of the six shared vocabularies,
and control / format characters.

Keep every entry valid Unicode (no lone surrogates): the corpus is UTF-8 only.
"""

# Real sentences, a few per language (hand-written; translation quality does not matter,
# the script, diacritics and word shapes do).
SENTENCES = [
    # Romance
    "El veloz murciélago hindú comía feliz cardillo y kiwi.",
    "La cigüeña tocaba el saxofón detrás del palenque de paja.",
    "O rápido cachorro marrom pulou sobre a raposa preguiçosa.",
    "Não há nada mais difícil do que começar; a coragem é a primeira virtude.",
    "Quel vituperabile xenofobo zelante assaggia il whisky ed esclama: alleluja!",
    "Nel mezzo del cammin di nostra vita mi ritrovai per una selva oscura.",
    "Înjurând pițigăiat, zoofobul comandă vexat whisky și tequila.",
    "Portez ce vieux whisky au juge blond qui fume sur son île intérieure.",
    "Jove xef, porti whisky amb quinze glaçons d'hidrogen, coi!",
    # Germanic
    "Victor jagt zwölf Boxkämpfer quer über den großen Sylter Deich.",
    "Pa's wijze lynx bezag vroom het fikse aquaduct.",
    "Flygande bäckasiner söka hwila på mjuka tuvor.",
    "Høj bly gom vandt fræk sexquiz på wc.",
    "Vår sære Zulu fra badeøya spilte jo whist og quickstep i min taxi.",
    "Kæmi ný öxi hér, ykist þjófum nú bæði víl og ádrepa.",
    "Ik heb gisteren een fiets gekocht, maar de bel doet het niet.",
    # Uralic, Baltic, others in Latin script
    "Törkylempijävongahdus on suomen kielen pangrammi.",
    "Põdur Zagrebi tšellomängija-följetonist Ciqo külmetas kehvas garaažis.",
    "Árvíztűrő tükörfúrógép; egy hűtlen vejét fülöncsípő, dühös mexikói úr.",
    "Įlinkdama fechtuotojo špaga sublykčiojusi pragręžė apvalų arbūzą.",
    "Glāžšķūņa rūķīši dzērumā čiepj Baha koncertflīģeļu vākus.",
    "Unë shkoj në shkollë çdo ditë me biçikletë.",
    "Kaixo mundua! Euskara Europako hizkuntza zaharrenetako bat da.",
    "Parciais fy jac codi baw hud llawn dŵr ger tŷ Mabon.",
    "D'fhuascail Íosa Úrmhac na hÓighe Beannaithe pór Éava agus Ádhaimh.",
    "Il-Malti huwa l-ilsien nazzjonali ta' Malta.",
    "Pijamalı hasta yağız şoföre çabucak güvendi.",
    "Zəfər, jaketini də papağını da götür, bu axşam hava çox soyuq olacaq.",
    "Oʻzbekiston — Markaziy Osiyodagi davlat.",
    "Vợ chồng ông Tư đi chợ Bến Thành mua hoa quả, xôi gấc và bánh chưng.",
    "Saya suka makan nasi goreng dengan telur mata sapi.",
    "Ang mabilis na kayumangging soro ay tumalon sa tamad na aso.",
    "Habari za asubuhi? Ninafurahi kukutana nawe leo.",
    "Ẹ kú àárọ̀! Ṣé dáadáa ni?",
    "Sannu da zuwa, yaya aiki?",
    "Sawubona, unjani namuhla?",
    "Aloha mai kākou, e komo mai i ka hale.",
    "Kia ora koutou katoa, nau mai, haere mai.",
    "Eĥoŝanĝo ĉiuĵaŭde: la ŝtupoj de ĝia ĉambro.",
    "Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae.",
    # Cyrillic
    "Щастям б'єш жук їх глицю в фон й ґедзь пріч.",
    "У рудога вераб'я ў сховішчы пад фатэлем ляжаць нейкія гаючыя зёлкі.",
    "Ах, чудна българска земьо, полюшвай цъфтящи жита.",
    "Збогум, Скопје! Ќе се видиме наскоро.",
    "Фијуче ветар у шибљу, леди пасаже и куће иза њих и гунђа у оџацима.",
    "Қазақстан — Орталық Азиядағы мемлекет.",
    "Монгол улсын нийслэл Улаанбаатар хот.",
    "Тоҷикистон кишвари кӯҳистонӣ аст.",
    # Greek, Armenian, Georgian
    "Τάχιστη αλώπηξ βαφής ψημένη γη, δρασκελίζει υπέρ νωθρού κυνός.",
    "Ο καιρός σήμερα είναι υπέροχος· πάμε για καφέ;",
    "Ճեպաճկուն Ջիլ ֆոքսը խոյն ու շամբուկը հաղթեց։",
    "Երևանը Հայաստանի մայրաքաղաքն է։",
    "სწრაფი ყავისფერი მელა გადაახტა ზარმაც ძაღლს.",
    "საქართველოს დედაქალაქი თბილისია.",
    # Semitic, Iranian
    "نص حكيم له سر قاطع وذو شأن عظيم مكتوب على ثوب أخضر ومغلف بجلد أزرق.",
    "القاهرة هي عاصمة جمهورية مصر العربية وأكبر مدنها.",
    "زبان فارسی یکی از زبان‌های هندواروپایی است.",
    "به نام خداوند جان و خرد، کزین برتر اندیشه برنگذرد.",
    "میں نے کل بازار سے تازہ پھل خریدے۔",
    "پښتو د افغانستان یوه رسمي ژبه ده.",
    "ئۇيغۇر تىلى تۈركىي تىللار ئائىلىسىگە مەنسۇپ.",
    "דג סקרן שט בים מאוכזב ולפתע מצא חברה.",
    "ירושלים היא בירת ישראל.",
    "דער יידיש שפּראַך איז זייער רייך.",
    "ሰላም ነው? ዛሬ አየሩ በጣም ጥሩ ነው።",
    "ܫܠܡܐ ܥܠܡܐ",
    "ދިވެހިރާއްޖެ",
    # Indic
    "ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश करने वाले विष्णुवतार भगवान श्रीराम।",
    "मराठी ही महाराष्ट्राची राजभाषा आहे.",
    "नेपाल हिमालयको काखमा रहेको सुन्दर देश हो।",
    "আমার সোনার বাংলা, আমি তোমায় ভালোবাসি।",
    "ਪੰਜਾਬੀ ਭਾਸ਼ਾ ਗੁਰਮੁਖੀ ਲਿਪੀ ਵਿੱਚ ਲਿਖੀ ਜਾਂਦੀ ਹੈ।",
    "ગુજરાત ભારતનું એક રાજ્ય છે.",
    "ଓଡ଼ିଆ ଏକ ଭାରତୀୟ ଭାଷା।",
    "யாமறிந்த மொழிகளிலே தமிழ்மொழி போல் இனிதாவது எங்கும் காணோம்.",
    "తెలుగు దేశ భాషలందు లెస్స.",
    "ಕನ್ನಡ ನಾಡು ನುಡಿ ಸಂಸ್ಕೃತಿ.",
    "മലയാളം ഒരു ദ്രാവിഡ ഭാഷയാണ്.",
    "ශ්‍රී ලංකාව දිවයිනකි.",
    "བོད་སྐད་ནི་བོད་ཀྱི་སྐད་ཡིག་རེད།",
    # South-East Asia
    "เป็นมนุษย์สุดประเสริฐเลิศคุณค่า กว่าบรรดาฝูงสัตว์เดรัจฉาน",
    "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย",
    "ພາສາລາວເປັນພາສາທາງການຂອງປະເທດລາວ",
    "ភាសាខ្មែរជាភាសាផ្លូវការនៃប្រទេសកម្ពុជា។",
    "မြန်မာဘာသာစကားသည် မြန်မာနိုင်ငံ၏ ရုံးသုံးဘာသာစကား ဖြစ်သည်။",
    # East Asia
    "天地玄黄，宇宙洪荒。日月盈昃，辰宿列张。",
    "人工智能正在改变我们的生活方式和工作方式。",
    "今天天气很好，我们去公园散步吧！",
    "臺灣的首都是臺北，人口約兩百五十萬。",
    "我哋今日去飲茶，食咗好多點心。",
    "いろはにほへと ちりぬるを わかよたれそ つねならむ",
    "吾輩は猫である。名前はまだ無い。",
    "お問い合わせは、メール（info@example.jp）または電話でどうぞ。",
    "キャッシュレス決済が急速に普及しています。",
    "다람쥐 헌 쳇바퀴에 타고파.",
    "키스의 고유조건은 입술끼리 만나야 하고 특별한 기술은 필요치 않다.",
    "서울특별시는 대한민국의 수도이다.",
    "ᠮᠣᠩᠭᠣᠯ ᠪᠢᠴᠢᠭ",
    # Americas, Arctic
    "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ",
    "ᐃᓄᒃᑎᑐᑦ ᐅᖃᐅᓯᖅ",
    "Runasimi simiqa Perú suyupi rimasqa.",
    "Ñande ñe'ẽ guaraní ha'e ñane retãmegua.",
]

# Short everyday phrases per script, to pad words with punctuation and numbers.
PHRASE_SEPARATORS = [" ", ", ", ". ", "! ", "? ", "; ", ": ", " — ", " - ", "\n", " (", ") ", "、", "。", "，", "؟ ", "، ", "। "]

# Alphabets: (name, [(first, last), ...]) inclusive code-point ranges of letters (and the
# marks that follow them). Words are drawn from them at random (make_corpus.py).
ALPHABETS = [
    ("latin_basic", [(0x61, 0x7A), (0x41, 0x5A)]),
    ("latin_ext", [(0xC0, 0xD6), (0xD8, 0xF6), (0xF8, 0x17F), (0x180, 0x24F)]),
    ("latin_ext_add", [(0x1E00, 0x1EFF)]),
    ("ipa", [(0x250, 0x2AF)]),
    ("greek", [(0x391, 0x3A1), (0x3A3, 0x3A9), (0x3B1, 0x3C9), (0x3AC, 0x3AF)]),
    ("greek_ext", [(0x1F00, 0x1F15), (0x1F18, 0x1F1D), (0x1F20, 0x1F45), (0x1F50, 0x1F57)]),
    ("cyrillic", [(0x410, 0x44F), (0x400, 0x40F), (0x450, 0x45F)]),
    ("cyrillic_ext", [(0x460, 0x481), (0x48A, 0x4FF), (0x500, 0x52F)]),
    ("armenian", [(0x531, 0x556), (0x561, 0x586)]),
    ("hebrew", [(0x5D0, 0x5EA)]),
    ("hebrew_pointed", [(0x5D0, 0x5EA), (0x5B0, 0x5BC)]),
    ("arabic", [(0x621, 0x64A)]),
    ("arabic_marks", [(0x621, 0x64A), (0x64B, 0x652)]),
    ("arabic_ext", [(0x671, 0x6D3), (0x6FA, 0x6FC)]),
    ("syriac", [(0x710, 0x72C)]),
    ("thaana", [(0x780, 0x7A5), (0x7A6, 0x7B0)]),
    ("nko", [(0x7CA, 0x7EA)]),
    ("devanagari", [(0x905, 0x939), (0x93E, 0x94C), (0x94D, 0x94D), (0x966, 0x96F)]),
    ("bengali", [(0x985, 0x98C), (0x995, 0x9A8), (0x9AA, 0x9B0), (0x9BE, 0x9C4)]),
    ("gurmukhi", [(0xA05, 0xA0A), (0xA15, 0xA28), (0xA3E, 0xA42)]),
    ("gujarati", [(0xA85, 0xA8D), (0xA95, 0xAA8), (0xABE, 0xAC5)]),
    ("oriya", [(0xB05, 0xB0C), (0xB15, 0xB28), (0xB3E, 0xB43)]),
    ("tamil", [(0xB85, 0xB8A), (0xB95, 0xB95), (0xB99, 0xB9A), (0xBA3, 0xBA4), (0xBA8, 0xBAA),
               (0xBAE, 0xBB9), (0xBBE, 0xBC2), (0xBCD, 0xBCD)]),
    ("telugu", [(0xC05, 0xC0C), (0xC15, 0xC28), (0xC3E, 0xC44)]),
    ("kannada", [(0xC85, 0xC8C), (0xC95, 0xCA8), (0xCBE, 0xCC4)]),
    ("malayalam", [(0xD05, 0xD0C), (0xD15, 0xD39), (0xD3E, 0xD44)]),
    ("sinhala", [(0xD85, 0xD96), (0xD9A, 0xDB1), (0xDCF, 0xDD4)]),
    ("thai", [(0xE01, 0xE2E), (0xE30, 0xE3A), (0xE40, 0xE4E)]),
    ("lao", [(0xE81, 0xE82), (0xE84, 0xE84), (0xE94, 0xE97), (0xE99, 0xE9F), (0xEB0, 0xEB9)]),
    ("tibetan", [(0xF40, 0xF47), (0xF49, 0xF6C), (0xF71, 0xF7D), (0xF0B, 0xF0B)]),
    ("myanmar", [(0x1000, 0x102A), (0x102B, 0x103E)]),
    ("georgian", [(0x10D0, 0x10FA)]),
    ("hangul_jamo", [(0x1100, 0x1112), (0x1161, 0x1175), (0x11A8, 0x11C2)]),
    ("ethiopic", [(0x1200, 0x1248), (0x1250, 0x1256), (0x1260, 0x1288)]),
    ("cherokee", [(0x13A0, 0x13F4)]),
    ("canadian_syllabics", [(0x1401, 0x166C)]),
    ("ogham", [(0x1681, 0x169A)]),
    ("runic", [(0x16A0, 0x16EA)]),
    ("khmer", [(0x1780, 0x17B3), (0x17B6, 0x17D2)]),
    ("mongolian", [(0x1820, 0x1877)]),
    ("hiragana", [(0x3041, 0x3096)]),
    ("katakana", [(0x30A1, 0x30FA), (0x30FC, 0x30FC)]),
    ("halfwidth_katakana", [(0xFF66, 0xFF9D)]),
    ("bopomofo", [(0x3105, 0x312F)]),
    ("cjk_common", [(0x4E00, 0x62FF)]),
    ("cjk_rare", [(0x6300, 0x9FFF)]),
    ("cjk_ext_a", [(0x3400, 0x4DBF)]),
    ("cjk_ext_b", [(0x20000, 0x2A6DF)]),
    ("cjk_compat", [(0xF900, 0xFA6D)]),
    ("hangul", [(0xAC00, 0xD7A3)]),
    ("yi", [(0xA000, 0xA48C)]),
    ("vai", [(0xA500, 0xA60B)]),
    ("fullwidth", [(0xFF21, 0xFF3A), (0xFF41, 0xFF5A), (0xFF10, 0xFF19)]),
    ("gothic", [(0x10330, 0x1034A)]),
    ("deseret", [(0x10400, 0x1044F)]),
    ("cuneiform", [(0x12000, 0x12399)]),
    ("egyptian", [(0x13000, 0x1342E)]),
    ("math_alnum", [(0x1D400, 0x1D454), (0x1D456, 0x1D49B), (0x1D7CE, 0x1D7FF)]),
    ("symbols", [(0x2190, 0x21FF), (0x2200, 0x22FF), (0x2300, 0x23FF), (0x2500, 0x257F),
                 (0x25A0, 0x25FF), (0x2600, 0x26FF), (0x2700, 0x27BF)]),
    ("box_braille", [(0x2500, 0x259F), (0x2800, 0x28FF)]),
    ("currency", [(0x20A0, 0x20C0), (0x24, 0x24), (0xA2, 0xA5)]),
    ("combining_marks", [(0x61, 0x7A), (0x300, 0x36F)]),
]

# Scripts whose text is written without spaces between words.
NO_SPACE_SCRIPTS = {"thai", "lao", "khmer", "myanmar", "hiragana", "katakana", "cjk_common",
                    "cjk_rare", "cjk_ext_a", "cjk_ext_b", "cjk_compat", "tibetan", "bopomofo",
                    "halfwidth_katakana", "yi", "cuneiform", "egyptian"}

# Code in many languages; make_corpus.py renames identifiers, re-indents, changes line
# endings and cuts them.
CODE = [
    # Python
    "from dataclasses import dataclass, field\n\n@dataclass\nclass Point:\n    x: float = 0.0\n    y: float = 0.0\n    tags: list[str] = field(default_factory=list)\n\n    def norm(self) -> float:\n        return (self.x ** 2 + self.y ** 2) ** 0.5\n",
    "async def fetch_all(session, urls):\n    tasks = [asyncio.create_task(fetch(session, u)) for u in urls]\n    return await asyncio.gather(*tasks, return_exceptions=True)\n",
    "with open(path, \"rb\") as f:\n    for lineno, line in enumerate(f, 1):\n        if b\"\\x00\" in line:\n            raise ValueError(f\"NUL at line {lineno}: {line!r}\")\n",
    "try:\n    value = int(os.environ.get('PORT', '8080'))\nexcept (TypeError, ValueError) as exc:\n    logging.warning('bad PORT: %s', exc)\n    value = 8080\n",
    "lambda_sq = lambda x: x*x\nresult = {k: v for k, v in sorted(data.items(), key=lambda kv: -kv[1])[:10]}\n",
    "@pytest.mark.parametrize(\"n, expected\", [(0, 1), (1, 1), (5, 120)])\ndef test_factorial(n, expected):\n    assert math.factorial(n) == expected\n",
    "print(f\"{name:>10} | {value:08.3f} | {ratio:.2%} | {count:,}\")\n",
    "import re\nPATTERN = re.compile(r\"(?P<key>[A-Za-z_]\\w*)\\s*=\\s*(?P<val>\\\"[^\\\"]*\\\"|\\d+)\")\n",
    # C / C++
    "static inline uint32_t rotl32(uint32_t x, int r) {\n    return (x << r) | (x >> (32 - r));\n}\n",
    "struct node {\n    int key;\n    struct node *left, *right;\n};\n\nstruct node *insert(struct node *root, int key);\n",
    "for (size_t i = 0; i < n; ++i) {\n    sum += a[i] * b[i];\n    if (sum > LIMIT) { break; }\n}\n",
    "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n#ifndef NDEBUG\n#  define LOG(...) fprintf(stderr, __VA_ARGS__)\n#endif\n",
    "auto it = std::find_if(v.begin(), v.end(), [&](const auto& e) { return e.id == id; });\nif (it != v.end()) v.erase(it);\n",
    "class Widget final : public Base {\n public:\n  explicit Widget(std::string name) : name_(std::move(name)) {}\n  ~Widget() override = default;\n private:\n  std::string name_;\n};\n",
    "std::unique_ptr<int[]> buf = std::make_unique<int[]>(1024);\nstd::cout << std::hex << 0xDEADBEEF << std::endl;\n",
    # Rust, Go, Zig
    "impl<T: Display> fmt::Display for Wrapper<T> {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"[{}]\", self.0)\n    }\n}\n",
    "match value {\n    Some(x) if x > 0 => println!(\"positive {x}\"),\n    Some(_) => {}\n    None => return Err(anyhow!(\"missing\")),\n}\n",
    "let counts: HashMap<&str, usize> = text.split_whitespace().fold(HashMap::new(), |mut m, w| {\n    *m.entry(w).or_default() += 1;\n    m\n});\n",
    "func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {\n\tctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)\n\tdefer cancel()\n\tif err := s.handle(ctx, w, r); err != nil {\n\t\thttp.Error(w, err.Error(), http.StatusInternalServerError)\n\t}\n}\n",
    "ch := make(chan int, 10)\ngo func() {\n\tfor i := 0; i < 10; i++ {\n\t\tch <- i\n\t}\n\tclose(ch)\n}()\n",
    "const std = @import(\"std\");\npub fn main() !void {\n    const stdout = std.io.getStdOut().writer();\n    try stdout.print(\"Hello, {s}!\\n\", .{\"world\"});\n}\n",
    # JS / TS
    "export async function getUser(id: string): Promise<User | undefined> {\n  const res = await fetch(`/api/users/${encodeURIComponent(id)}`);\n  if (!res.ok) return undefined;\n  return (await res.json()) as User;\n}\n",
    "const debounce = (fn, ms = 300) => {\n  let t;\n  return (...args) => { clearTimeout(t); t = setTimeout(() => fn.apply(this, args), ms); };\n};\n",
    "document.querySelectorAll('.item').forEach((el, i) => el.classList.toggle('odd', i % 2 === 1));\n",
    "interface Props { title: string; count?: number; onClick: (e: MouseEvent) => void }\ntype Maybe<T> = T | null | undefined;\n",
    "useEffect(() => {\n  const id = setInterval(() => setTick(t => t + 1), 1000);\n  return () => clearInterval(id);\n}, []);\n",
    # JVM
    "public record Pair<A, B>(A first, B second) {\n    public static <A, B> Pair<A, B> of(A a, B b) { return new Pair<>(a, b); }\n}\n",
    "List<String> names = people.stream()\n    .filter(p -> p.getAge() >= 18)\n    .map(Person::getName)\n    .collect(Collectors.toList());\n",
    "fun main(args: Array<String>) {\n    val squares = (1..10).map { it * it }.filter { it % 2 == 0 }\n    println(\"Squares: $squares\")\n}\n",
    "object Main extends App {\n  val xs = List(1, 2, 3).map(_ * 2)\n  println(xs.mkString(\", \"))\n}\n",
    # Swift, Obj-C, C#
    "struct ContentView: View {\n    @State private var count = 0\n    var body: some View {\n        Button(\"Tapped \\(count) times\") { count += 1 }\n    }\n}\n",
    "public async Task<IActionResult> Get(int id)\n{\n    var item = await _db.Items.FindAsync(id);\n    return item is null ? NotFound() : Ok(item);\n}\n",
    # Scripting
    "def greet(name = \"world\")\n  puts \"Hello, #{name.capitalize}!\"\nend\n\n[1, 2, 3].each_with_index { |x, i| puts \"#{i}: #{x}\" }\n",
    "<?php\n$items = array_filter($items, fn($x) => $x['active'] ?? false);\necho json_encode(['count' => count($items)]);\n?>\n",
    "my %h = map { $_ => length($_) } qw(apple banana cherry);\nprint \"$_ => $h{$_}\\n\" for sort keys %h;\n",
    "local function map(t, f)\n  local r = {}\n  for i, v in ipairs(t) do r[i] = f(v) end\n  return r\nend\n",
    "df <- read.csv(\"data.csv\")\nsummary(lm(y ~ x + I(x^2), data = df))\n",
    "function mandel(c; maxiter=80)\n    z = zero(c)\n    for n in 1:maxiter\n        abs(z) > 2 && return n - 1\n        z = z^2 + c\n    end\n    return maxiter\nend\n",
    "main :: IO ()\nmain = do\n  let xs = [x * y | x <- [1..5], y <- [1..5], odd (x + y)]\n  print (foldr (+) 0 xs)\n",
    "(defn fib [n]\n  (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))\n(println (map fib (range 10)))\n",
    "let rec fact n = if n <= 1 then 1 else n * fact (n - 1)\nlet () = Printf.printf \"%d\\n\" (fact 10)\n",
    "defmodule Math do\n  def sum([]), do: 0\n  def sum([h | t]), do: h + sum(t)\nend\n",
    # Shell, build, config
    "#!/usr/bin/env bash\nset -euo pipefail\nIFS=$'\\n\\t'\nfor f in \"${@:-.}\"/*.log; do\n  gzip -9 -- \"$f\" && echo \"compressed: ${f##*/}\"\ndone\n",
    "find . -type f -name '*.py' -print0 | xargs -0 grep -n 'TODO' | sort -t: -k1,1 -k2,2n\n",
    "CC ?= gcc\nCFLAGS += -O2 -Wall -Wextra\n\n%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n\nall: main\n",
    "FROM python:3.11-slim\nWORKDIR /app\nCOPY requirements.txt .\nRUN pip install --no-cache-dir -r requirements.txt\nCMD [\"python\", \"-m\", \"app\"]\n",
    "version: \"3.9\"\nservices:\n  web:\n    image: nginx:1.25\n    ports:\n      - \"8080:80\"\n    environment:\n      - TZ=Europe/Paris\n",
    "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n",
    "cmake_minimum_required(VERSION 3.20)\nproject(demo LANGUAGES CXX)\nadd_executable(demo main.cpp)\ntarget_compile_features(demo PRIVATE cxx_std_20)\n",
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n[remote \"origin\"]\n\turl = git@example.com:me/repo.git\n",
    # Web, data
    ".card > .title:hover::after {\n  content: \"\\201C\";\n  color: #ff00aa;\n  margin: 0 auto !important;\n  transition: all .2s ease-in-out;\n}\n",
    "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 24 24\"><path d=\"M12 2L2 7l10 5 10-5-10-5z\"/></svg>\n",
    "<template>\n  <div v-if=\"items.length\" :class=\"{ active: isActive }\" @click=\"toggle\">{{ items[0].name }}</div>\n</template>\n",
    "WITH ranked AS (\n  SELECT user_id, amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn\n  FROM orders\n)\nSELECT * FROM ranked WHERE rn <= 3;\n",
    "CREATE TABLE IF NOT EXISTS users (\n  id BIGSERIAL PRIMARY KEY,\n  email TEXT UNIQUE NOT NULL,\n  created_at TIMESTAMPTZ DEFAULT now()\n);\n",
    "{\n  \"name\": \"pagoda\",\n  \"version\": \"1.0.0\",\n  \"scripts\": {\"test\": \"jest --coverage\"},\n  \"dependencies\": {}\n}\n",
    "id,name,score\n1,\"Smith, John\",93.5\n2,Zoë,88\n3,\"O'Brien\",\n",
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<note date=\"2024-01-01\"><to>Tove</to><body>Don't forget &lt;me&gt;!</body></note>\n",
    # Low level, misc
    "section .text\nglobal _start\n_start:\n    mov rax, 60\n    xor rdi, rdi\n    syscall\n",
    "module counter(input clk, input rst, output reg [7:0] q);\n  always @(posedge clk) q <= rst ? 8'd0 : q + 8'd1;\nendmodule\n",
    "^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*)@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\\.)+$",
    "diff --git a/src/main.c b/src/main.c\n--- a/src/main.c\n+++ b/src/main.c\n@@ -1,3 +1,4 @@\n #include <stdio.h>\n+#include <stdlib.h>\n",
    "Traceback (most recent call last):\n  File \"main.py\", line 3, in <module>\n    1 / 0\nZeroDivisionError: division by zero\n",
    "2024-06-01 12:00:00,123 [INFO] server.py:42 - listening on 0.0.0.0:8000 (pid=1234)\n",
    "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\begin{document}\n$\\int_0^1 x^2\\,dx = \\frac{1}{3}$\n\\end{document}\n",
]

IDENTIFIERS = [
    "x", "y", "i", "j", "n", "tmp", "value", "result", "data", "items", "count", "total", "buf",
    "userName", "user_name", "UserName", "USER_NAME", "maxRetries", "max_retries", "kMaxSize",
    "httpClient", "parseJSON", "toString", "__init__", "_private", "$scope", "self", "this",
    "getElementById", "num_tokens", "tokenizer", "vocab_size", "embedding_dim", "π", "ñandú",
    "größe", "счётчик", "変数", "데이터", "αβγ", "x1", "x_2", "a0b1c2", "foo_bar_baz_qux",
]

# Emoji building blocks.
SKIN_TONE_BASES = (
    "👋🤚🖐✋🖖👌🤌🤏✌🤞🤟🤘🤙👈👉👆🖕👇☝👍👎✊👊🤛🤜👏🙌👐🤲🤝🙏✍💅🤳💪🦵🦶👂🦻👃"
    "👶🧒👦👧🧑👱👨🧔👩🧓👴👵🙍🙎🙅🙆💁🙋🧏🙇🤦🤷👮🕵💂🥷👷🤴👸👳👲🧕🤵👰🤰🤱👼🎅🤶"
    "🦸🦹🧙🧚🧛🧜🧝💆💇🚶🧍🧎🏃💃🕺🧖🧗🏇🏂🏌🏄🚣🏊⛹🏋🚴🚵🤸🤽🤾🤹🧘🛀🛌"
)
SKIN_TONES = "\U0001F3FB\U0001F3FC\U0001F3FD\U0001F3FE\U0001F3FF"
PROFESSION_OBJECTS = ["💻", "🔬", "🎨", "🚀", "🚒", "⚕\ufe0f", "⚖\ufe0f", "✈\ufe0f", "🌾", "🍳",
                      "🎓", "🎤", "🏫", "🏭", "🔧", "💼", "🦯", "🦼", "🦽", "🍼", "🎄"]
PERSONS = ["🧑", "👨", "👩"]
GENDER_SIGNS = ["\u2642\ufe0f", "\u2640\ufe0f"]
GENDERABLE = "🙍🙎🙅🙆💁🙋🧏🙇🤦🤷👮🕵💂👷👳🦸🦹🧙🧚🧛🧜🧝💆💇🚶🧍🧎🏃🧖🧗🏌🏄🚣🏊⛹🏋🚴🚵🤸🤼🤽🤾🤹🧘"
ZWJ_FIXED = [
    "👨\u200d👩\u200d👧\u200d👦", "👨\u200d👩\u200d👧", "👩\u200d👩\u200d👦", "👨\u200d👨\u200d👧\u200d👧",
    "👩\u200d👦\u200d👦", "👨\u200d👧", "👩\u200d❤\ufe0f\u200d👨", "👨\u200d❤\ufe0f\u200d💋\u200d👨",
    "👩\u200d❤\ufe0f\u200d💋\u200d👩", "🧑\u200d🤝\u200d🧑", "🏳\ufe0f\u200d🌈", "🏳\ufe0f\u200d⚧\ufe0f",
    "🏴\u200d☠\ufe0f", "🐕\u200d🦺", "🐈\u200d⬛", "🐻\u200d❄\ufe0f", "🐦\u200d⬛", "😶\u200d🌫\ufe0f",
    "❤\ufe0f\u200d🔥", "❤\ufe0f\u200d🩹", "😮\u200d💨", "😵\u200d💫", "👁\ufe0f\u200d🗨\ufe0f",
    "🧔\u200d♂\ufe0f", "👱\u200d♀\ufe0f", "🧑\u200d🦰", "👩\u200d🦱", "👨\u200d🦳", "🧑\u200d🦲",
    "🧑\u200d🍼", "🧑\u200d🎄", "🫱🏻\u200d🫲🏿", "🧑🏻\u200d🤝\u200d🧑🏿", "👩🏽\u200d🚀", "🏃🏾\u200d♀\ufe0f\u200d➡\ufe0f",
]
PLAIN_EMOJI = (
    "😀😃😄😁😆😅😂🤣🥲🥹☺😊😇🙂🙃😉😌😍🥰😘😗😙😚😋😛😝😜🤪🤨🧐🤓😎🥸🤩🥳🙂‍↕️😏😒🙂‍↔️😞😔😟😕🙁☹😣"
    "😖😫😩🥺😢😭😮‍💨😤😠😡🤬🤯😳🥵🥶😱😨😰😥😓🫣🤗🫡🤔🫢🤭🤫🤥😶😐😑😬🫨🫠🙄😯😦😧😮😲🥱😴🤤😪"
    "🐶🐱🐭🐹🐰🦊🐻🐼🐨🐯🦁🐮🐷🐸🐵🐔🐧🐦🐤🦆🦅🦉🦇🐺🐗🐴🦄🐝🪱🐛🦋🐌🐞🐜🪰🪲🪳🦟🦗🕷🦂🐢🐍🦎🦖🦕🐙"
    "🍏🍎🍐🍊🍋🍌🍉🍇🍓🫐🍈🍒🍑🥭🍍🥥🥝🍅🍆🥑🥦🥬🥒🌶🫑🌽🥕🫒🧄🧅🥔🍠🥐🥯🍞🥖🥨🧀🥚🍳🧈🥞🧇🥓🥩"
    "⚽🏀🏈⚾🥎🎾🏐🏉🥏🎱🪀🏓🏸🏒🏑🥍🏏🪃🥅⛳🪁🏹🎣🤿🥊🥋🎽🛹🛼🛷⛸🥌🎿⛷🏂🪂🚗🚕🚙🚌🚎🏎🚓🚑🚒🚐🛻🚚"
    "⌚📱📲💻⌨🖥🖨🖱🖲🕹🗜💽💾💿📀📼📷📸📹🎥📽🎞📞☎📟📠📺📻🎙🎚🎛🧭⏱⏲⏰🕰⌛⏳📡🔋🪫🔌💡🔦🕯"
    "❤🧡💛💚💙💜🖤🤍🤎💔❣💕💞💓💗💖💘💝💟☮✝☪🕉☸✡🔯🕎☯☦🛐⛎♈♉♊♋♌♍♎♏♐♑♒♓🆔⚛🉑☢☣"
    "✅☑✔❌❎➕➖➗➰➿〽✳✴❇‼⁉❓❔❕❗〰©®™🔟🔠🔡🔢🔣🔤🅰🆎🅱🆑🆒🆓ℹ🆕🆖🅾🆗🅿🆘🆙🆚"
)
COUNTRY_CODES = (
    "AD AE AF AG AL AM AO AR AT AU AZ BA BB BD BE BF BG BH BI BJ BN BO BR BS BT BW BY BZ CA CD "
    "CF CG CH CI CL CM CN CO CR CU CV CY CZ DE DJ DK DM DO DZ EC EE EG ER ES ET EU FI FJ FM FR "
    "GA GB GD GE GH GM GN GQ GR GT GW GY HK HN HR HT HU ID IE IL IN IQ IR IS IT JM JO JP KE KG "
    "KH KI KM KN KP KR KW KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MG MH MK ML MM MN MR "
    "MT MU MV MW MX MY MZ NA NE NG NI NL NO NP NR NZ OM PA PE PG PH PK PL PT PW PY QA RO RS RU "
    "RW SA SB SC SD SE SG SI SK SL SM SN SO SR SS ST SV SY SZ TD TG TH TJ TL TM TN TO TR TT TV "
    "TW TZ UA UG UN US UY UZ VA VC VE VN VU WS YE ZA ZM ZW XK AQ"
).split()
TAG_FLAGS = ["gbeng", "gbsct", "gbwls", "usca", "ustx"]  # subdivision tag sequences
KEYCAP_BASES = "0123456789#*"

# Spellings of the special tokens of the six shared vocabularies and of other chat formats
# (as plain text in the corpus: the tests encode with special tokens left as text, and
# test_hf_tokenizers.py also with them parsed).
SPECIAL_TOKENS = [
    # Llama 2 / SentencePiece
    "<s>", "</s>", "<unk>", "[INST]", "[/INST]", "<<SYS>>", "<</SYS>>",
    # Llama 3
    "<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
    "<|eot_id|>", "<|eom_id|>", "<|python_tag|>", "<|finetune_right_pad_id|>",
    "<|reserved_special_token_0|>", "<|reserved_special_token_7|>", "<|reserved_special_token_250|>",
    "<|image|>",
    # Qwen 3
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
    # Gemma 3
    "<bos>", "<eos>", "<pad>", "<mask>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>",
    "<end_of_image>", "<image_soft_token>", "[multimodal]", "<unused0>", "<unused42>",
    "<unused6241>", "<b>", "</b>", "<table>", "<tr>", "<td>", "</td>",
    # DeepSeek V3
    "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜▁pad▁｜>", "<｜User｜>", "<｜Assistant｜>",
    "<｜fim▁hole｜>", "<｜fim▁begin｜>", "<｜fim▁end｜>", "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<｜tool▁outputs▁begin｜>",
    "<|EOT|>", "<｜place▁holder▁no▁0｜>",
    # gpt-oss (harmony)
    "<|startoftext|>", "<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>",
    "<|return|>", "<|call|>", "<|reserved_200000|>", "<|endofprompt|>",
    # others
    "<|user|>", "<|assistant|>", "<|system|>", "<|end_of_turn|>", "[CLS]", "[SEP]", "[PAD]",
    "[MASK]", "<|padding|>", "<|startofpiece|>", "<EOT>", "<end_of_utterance>", "<fim_prefix>",
]

CHAT_TEMPLATES = [
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n{sys}<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n{user}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    "<|im_start|>system\n{sys}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
    "<bos><start_of_turn>user\n{sys}\n\n{user}<end_of_turn>\n<start_of_turn>model\n",
    "<s>[INST] <<SYS>>\n{sys}\n<</SYS>>\n\n{user} [/INST]",
    "<｜begin▁of▁sentence｜>{sys}<｜User｜>{user}<｜Assistant｜><think>\n",
    "<|start|>system<|message|>{sys}<|end|><|start|>user<|message|>{user}<|end|><|start|>assistant<|channel|>analysis<|message|>",
    "<|im_start|>assistant\n<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{user}\"}}}}\n</tool_call><|im_end|>",
]

# Control and format characters (every C0 and C1 control, DEL, and the invisible
# formatting characters that text from the web carries).
C0 = [chr(c) for c in range(0x00, 0x20)] + ["\x7f"]
C1 = [chr(c) for c in range(0x80, 0xA0)]
FORMAT_CHARS = [
    "\u00ad", "\u034f", "\u061c", "\u115f", "\u1160", "\u17b4", "\u180e", "\u200b", "\u200c",
    "\u200d", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2060",
    "\u2061", "\u2062", "\u2063", "\u2064", "\u2066", "\u2067", "\u2068", "\u2069", "\u206a",
    "\u206f", "\u3164", "\ufe00", "\ufe0e", "\ufe0f", "\ufeff", "\uffa0", "\ufff9", "\ufffa",
    "\ufffb", "\ufffc", "\ufffd", "\U000e0001", "\U000e0020", "\U000e007f", "\U000e0100",
    "\U0001d173", "\U0001bca0",
]
NONCHARACTERS = ["\ufdd0", "\ufdef", "\ufffe", "\uffff", "\U0001fffe", "\U0001ffff",
                 "\U0010fffe", "\U0010ffff"]
PRIVATE_USE = ["\ue000", "\ue0ff", "\uf8ff", "\U000f0000", "\U000ffffd", "\U00100000", "\U0010fffd"]
UNASSIGNED = ["\u0378", "\u0890", "\u2fff", "\U0002fffd", "\U000dffff", "\U0003fffd"]

# Every Unicode space and line-break character.
SPACES = ["\u0020", "\u00a0", "\u1680", "\u2000", "\u2001", "\u2002", "\u2003", "\u2004",
          "\u2005", "\u2006", "\u2007", "\u2008", "\u2009", "\u200a", "\u202f", "\u205f", "\u3000"]
LINE_BREAKS = ["\n", "\r", "\r\n", "\u000b", "\u000c", "\u0085", "\u2028", "\u2029"]

# Digits of other numbering systems (0-9 in order).
DIGIT_SETS = [
    "0123456789", "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳۴۵۶۷۸۹", "०१२३४५६७८९", "০১২৩৪৫৬৭৮৯", "੦੧੨੩੪੫੬੭੮੯",
    "૦૧૨૩૪૫૬૭૮૯", "୦୧୨୩୪୫୬୭୮୯", "௦௧௨௩௪௫௬௭௮௯", "౦౧౨౩౪౫౬౭౮౯", "೦೧೨೩೪೫೬೭೮೯",
    "൦൧൨൩൪൫൬൭൮൯", "๐๑๒๓๔๕๖๗๘๙", "໐໑໒໓໔໕໖໗໘໙", "༠༡༢༣༤༥༦༧༨༩", "၀၁၂၃၄၅၆၇၈၉",
    "០១២៣៤៥៦៧៨៩", "᠐᠑᠒᠓᠔᠕᠖᠗᠘᠙", "０１２３４５６７８９", "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗", "𝟘𝟙𝟚𝟛𝟜𝟝𝟞𝟟𝟠𝟡",
    "⁰¹²³⁴⁵⁶⁷⁸⁹", "₀₁₂₃₄₅₆₇₈₉", "〇一二三四五六七八九", "𑁦𑁧𑁨𑁩𑁪𑁫𑁬𑁭𑁮𑁯",
]
NUMBER_SYMBOLS = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑳㉑㊿ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩⅪⅫⅬⅭⅮⅯ½⅓⅔¼¾⅕⅛⅞↉"
