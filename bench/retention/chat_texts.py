# ruff: noqa: RUF001 (Chinese text uses full-width punctuation)
"""A personal assistant over a messaging app: what people ask and what it answers.

Topics are templates with slots filled by the session's seeded generator; a topic runs for one
to four exchanges (a question, then follow-ups). The planted phrases for chats (constraints,
facts, decisions) are at the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from random import Random


@dataclass(frozen=True)
class Topic:
    asks: tuple[str, ...]
    answers: tuple[str, ...]


SLOTS: dict[str, dict[str, tuple[str, ...]]] = {
    "es": {
        "ciudad": (
            "Lisboa",
            "Oporto",
            "Sevilla",
            "Valencia",
            "Bilbao",
            "Granada",
            "Roma",
            "Ciudad de México",
            "Oaxaca",
            "Buenos Aires",
            "Cartagena",
        ),
        "plato": (
            "tortilla de patatas",
            "lentejas con chorizo",
            "pollo al curry",
            "arroz con leche",
            "gazpacho",
            "empanadas de carne",
            "chilaquiles verdes",
        ),
        "persona": (
            "mi casera",
            "el profesor de mi hija",
            "mi jefa",
            "el seguro del coche",
            "la comunidad de vecinos",
            "el dentista",
        ),
        "motivo": (
            "cambiar la fecha de la cita",
            "pedir un presupuesto",
            "quejarme de un cobro duplicado",
            "avisar de que llegaré tarde",
            "pedir unos días libres",
        ),
        "frase": (
            "me he quedado sin batería",
            "¿me puede cobrar, por favor?",
            "llevo media hora esperando",
            "¿dónde está la parada del autobús?",
            "tengo una reserva a mi nombre",
        ),
        "cosa": ("supermercado", "gasolina", "suscripciones", "comer fuera", "luz y gas"),
        "objetivo": (
            "la espalda",
            "ganar resistencia",
            "estirar después de correr",
            "empezar a correr",
            "fortalecer las rodillas",
        ),
        "aficion": (
            "la jardinería",
            "los puzles",
            "el café de especialidad",
            "la fotografía",
            "cocinar",
            "el senderismo",
        ),
        "problema_movil": (
            "se queda sin batería a mediodía",
            "no carga con el cable nuevo",
            "va muy lento desde la actualización",
            "no me llegan las notificaciones",
        ),
        "libro": (
            "La sombra del viento",
            "Cien años de soledad",
            "Patria",
            "El infinito en un junco",
            "Rayuela",
        ),
        "barrio": ("Lavapiés", "Gràcia", "Ruzafa", "Triana", "Chamberí", "Coyoacán", "Palermo"),
        "puesto": (
            "analista de datos",
            "enfermera en un hospital privado",
            "profesor de secundaria",
            "diseñadora UX",
            "jefe de almacén",
        ),
        "tema": (
            "las fracciones",
            "la fotosíntesis",
            "los verbos irregulares",
            "las tablas de multiplicar",
            "la regla de tres",
        ),
        "perro_problema": (
            "come hierba",
            "ladra cuando me voy",
            "tira mucho de la correa",
            "no quiere salir cuando llueve",
        ),
        "n": ("2", "3", "4", "5", "6"),
        "dinero": ("30", "50", "80", "120", "200"),
        "dia": ("lunes", "martes", "miércoles", "jueves", "viernes"),
        "comida": (
            "el arroz",
            "la crema de calabaza",
            "el pollo asado",
            "las lentejas",
            "la tortilla",
        ),
        "texto": (
            "Hola, te escribo para confirmar la cita del jueves, pero no se si podre llegar a las 9",
            "Buenos dias, adjunto el documento tambien le mando la factura",
            "Perdona la tardanza en contestar, estuve de viaje",
        ),
        "luz": (
            "sol toda la mañana",
            "sombra casi todo el día",
            "sol fuerte por la tarde",
            "poca luz y mucho viento",
        ),
        "concepto": (
            "la inflación",
            "un algoritmo",
            "la hipoteca",
            "el interés compuesto",
            "una vacuna",
        ),
    },
    "zh": {
        "city": ("成都", "杭州", "西安", "厦门", "大理", "青岛", "京都", "首尔", "新加坡", "清迈"),
        "dish": ("红烧肉", "番茄炒蛋", "酸菜鱼", "可乐鸡翅", "麻婆豆腐", "蛋炒饭", "冬瓜排骨汤"),
        "person": ("房东", "孩子的班主任", "领导", "物业", "快递客服", "保险公司"),
        "reason": ("改一下预约时间", "申请退款", "请两天假", "说明账单多扣了钱", "催一下维修"),
        "thing": ("外卖", "打车", "会员订阅", "买衣服", "水电煤"),
        "goal": ("缓解颈椎不舒服", "减脂", "跑步前热身", "改善睡眠", "增强核心力量"),
        "hobby": ("喝茶", "拼乐高", "露营", "摄影", "烘焙", "看球"),
        "phone_problem": ("耗电特别快", "更新后变卡了", "收不到微信通知", "充电很慢"),
        "book": ("活着", "三体", "围城", "平凡的世界", "小王子"),
        "job": ("数据分析师", "产品经理", "小学老师", "UI 设计师", "财务"),
        "topic": ("分数加减", "鸡兔同笼", "英语过去式", "乘法口诀", "面积计算"),
        "n": ("2", "3", "4", "5"),
        "money": ("200", "300", "500", "800", "1000"),
        "day": ("周一", "周二", "周三", "周四", "周五"),
        "food": ("米饭", "南瓜汤", "烤鸡", "卤肉", "饺子馅"),
        "light": ("上午有太阳", "整天都比较阴", "下午西晒很厉害", "光线少风还大"),
        "concept": ("通货膨胀", "算法", "房贷", "复利", "疫苗"),
    },
    "en": {
        "city": ("Lisbon", "Kyoto", "Edinburgh", "Montreal", "Cape Town", "Hanoi", "Vienna"),
        "dish": (
            "a vegetable lasagna",
            "banana bread",
            "a chickpea curry",
            "shakshuka",
            "pancakes",
        ),
        "person": ("my landlord", "my manager", "the airline", "my kid's school", "the gym"),
        "reason": (
            "get a refund",
            "move a meeting",
            "cancel a membership",
            "ask for a deadline extension",
        ),
        "n": ("2", "3", "4", "5"),
        "money": ("20", "40", "60", "100"),
    },
}

TOPICS: dict[str, tuple[Topic, ...]] = {
    "es": (
        Topic(
            (
                "¿Qué me recomiendas ver en {ciudad} en {n} días?",
                "Voy a {ciudad} {n} días, ¿qué no me puedo perder?",
                "hola! me voy a {ciudad}, ideas para {n} días?",
            ),
            (
                "Para {n} días en {ciudad} yo haría así:\n1. Primer día: el centro histórico a pie y un mirador al atardecer.\n2. Segundo día: un museo por la mañana y un barrio con mercado por la tarde.\n3. El resto: una excursión corta fuera de la ciudad o repetir lo que más te haya gustado.\nReserva con antelación lo que tenga cola y lleva calzado cómodo.",
                "En {ciudad} con {n} días te da para lo básico sin correr: centro y casco antiguo el primer día, museos y mercado el segundo y deja medio día libre para perderte. Si me dices qué te gusta más (comida, arte, naturaleza) lo afino.",
            ),
        ),
        Topic(
            (
                "¿Cómo hago {plato} para {n} personas?",
                "receta de {plato} fácil para {n}",
                "Quiero hacer {plato} esta noche, ¿me ayudas?",
            ),
            (
                "Para {plato} para {n} personas:\n- Ingredientes: calcula una ración generosa por persona y algo de sobra.\n- Prepara todo antes de encender el fuego (cortar, medir).\n- Cocina a fuego medio y prueba de sal al final.\nSi quieres te paso cantidades exactas.",
                "{plato} sale bien si no tienes prisa: sofríe despacio, añade el resto por orden y deja reposar unos minutos antes de servir. Para {n} personas, una olla mediana basta.",
            ),
        ),
        Topic(
            (
                "Ayúdame a escribir un mensaje a {persona} para {motivo}",
                "¿Me redactas un correo a {persona}? Es para {motivo}",
            ),
            (
                "Aquí tienes un borrador:\n\n«Hola, buenos días. Le escribo para {motivo}. Si le viene bien, podemos hablarlo por teléfono esta semana. Quedo atenta a su respuesta. Un saludo.»\n\n¿Lo quieres más formal o más directo?",
                "Propuesta:\n\n«Buenas tardes: quería {motivo}. Le agradecería que me confirmara cuando pueda. Gracias de antemano.»\n\nEs corto a propósito; si quieres añadimos detalles.",
            ),
        ),
        Topic(
            ("¿Cómo se dice «{frase}» en inglés?", "traduce «{frase}» al inglés porfa"),
            (
                "Lo más natural sería una frase corta y directa; en inglés se suele suavizar con «please» o «sorry». Si es para hablar, dilo con tono amable y ya está.",
                "Depende del contexto, pero la forma neutra te sirve en casi cualquier sitio. ¿Es para escribirlo o para decirlo en voz alta?",
            ),
        ),
        Topic(
            (
                "Gasto unos {dinero} euros al mes en {cosa}, ¿cómo puedo ahorrar?",
                "¿ideas para gastar menos en {cosa}?",
            ),
            (
                "Tres cosas que suelen funcionar con {cosa}: apunta una semana todo lo que gastas, fija un tope semanal en vez de mensual y elimina una compra recurrente que no echarías de menos. Con eso mucha gente recorta un 15-20 %.",
                "Empieza por lo fácil: revisa lo que se cobra solo (suscripciones, tarifas) y compara precios una vez al mes. Para {cosa}, planificar con antelación es lo que más se nota.",
            ),
        ),
        Topic(
            (
                "Dame una rutina de {n}0 minutos para {objetivo}",
                "¿qué ejercicios hago para {objetivo}?",
            ),
            (
                "Rutina de {n}0 minutos para {objetivo}:\n- 5 min de calentamiento suave.\n- 3 rondas de 4 ejercicios, 40 s de trabajo y 20 s de descanso.\n- 5 min de estiramientos.\nSi notas dolor (no molestia), para.",
                "Para {objetivo}, mejor poco y constante: tres días por semana, progresando despacio. Si quieres te lo paso en una tabla.",
            ),
        ),
        Topic(
            (
                "Llevo {n} noches durmiendo fatal, ¿algún consejo?",
                "no consigo dormirme antes de las 2, qué hago",
            ),
            (
                "Lo que más ayuda suele ser lo más aburrido: misma hora de levantarse todos los días, nada de pantallas la última media hora y la habitación fresca y a oscuras. Si sigue así más de unas semanas, coméntalo con tu médico.",
                "Prueba a no mirar la hora por la noche y a levantarte si llevas más de veinte minutos despierto. La cafeína después de las cuatro también se nota más de lo que parece.",
            ),
        ),
        Topic(
            (
                "Ideas de regalo para alguien a quien le gusta {aficion}, máximo {dinero} euros",
                "¿qué le regalo a mi padre? le encanta {aficion}",
            ),
            (
                "Para alguien que disfruta de {aficion}, con ese presupuesto: algo útil que no se compraría él mismo, una experiencia (un taller o una salida) o un clásico bien elegido. ¿Te paso tres opciones concretas?",
                "Con {aficion} aciertas casi siempre con una experiencia más que con un objeto. Si prefieres algo para envolver, busca accesorios de buena calidad dentro de tu presupuesto.",
            ),
        ),
        Topic(
            ("Mi móvil {problema_movil}, ¿qué hago?", "el teléfono {problema_movil}, alguna idea?"),
            (
                "Prueba en este orden: reinicia, revisa en Ajustes qué apps consumen más, actualiza el sistema y, si nada cambia, haz copia de seguridad antes de restaurar. Muchas veces es una sola app.",
                "Antes de nada, reinícialo y mira si el problema sigue. Luego revisa permisos y ahorro de energía; ahí suele estar la causa.",
            ),
        ),
        Topic(
            ("Recomiéndame {n} libros parecidos a {libro}", "me encantó {libro}, ¿qué leo ahora?"),
            (
                "Si te gustó {libro}, busca novelas con el mismo tono: historias familiares largas, una ciudad muy presente y algo de misterio. Te puedo hacer una lista de {n} si me dices si prefieres clásicos o novedades.",
                "Para después de {libro} te diría algo del mismo autor y luego saltar a otro país con un estilo parecido. ¿Lees en papel o en digital?",
            ),
        ),
        Topic(
            (
                "¿Qué debo preguntar al visitar un piso en {barrio}?",
                "mañana veo un piso en {barrio}, qué miro?",
            ),
            (
                "Lista rápida: gastos de comunidad, qué incluye el alquiler, estado de ventanas y calefacción, ruido a distintas horas, fianza y duración del contrato. Pide verlo de día y abre grifos y enchufes.",
                "En {barrio} pregunta sobre todo por el ruido y el aparcamiento. Mira humedades en techos y esquinas, y que te den por escrito lo que incluye el precio.",
            ),
        ),
        Topic(
            (
                "Tengo una entrevista para {puesto}, ¿qué me preguntarán?",
                "entrevista de {puesto} el lunes, ayuda",
            ),
            (
                "Casi seguro: por qué quieres el puesto, un ejemplo de un problema que resolviste, cómo trabajas en equipo y tus expectativas. Prepara dos historias concretas y una pregunta para ellos.",
                "Para {puesto}, repasa tu experiencia con ejemplos medibles. Si quieres hacemos un simulacro: te pregunto y me contestas.",
            ),
        ),
        Topic(
            (
                "Mi hijo no entiende {tema}, ¿cómo se lo explico?",
                "cómo explico {tema} a un niño de 10 años",
            ),
            (
                "Con {tema} funciona empezar por algo que pueda tocar o ver (comida, dinero, dibujos) y solo después pasar a los números o a las reglas. Cinco minutos al día rinden más que una tarde entera.",
                "Prueba a que te lo explique él a ti: así ves dónde se pierde. Para {tema}, un ejemplo cotidiano vale más que tres ejercicios.",
            ),
        ),
        Topic(
            ("Mi perro {perro_problema}, ¿es normal?", "el perro {perro_problema}, me preocupo?"),
            (
                "Es bastante habitual y casi siempre tiene solución con paciencia y rutina. Si ves cambios de apetito, vómitos o apatía, llévalo al veterinario.",
                "Suele ser una cuestión de hábito. Premia lo que quieres que haga y no le des atención a lo otro; en unas semanas se nota.",
            ),
        ),
        Topic(
            (
                "¿Me ayudas a organizar la semana? Tengo {n} reuniones, el dentista y la compra",
                "organízame el {dia}, voy fatal",
            ),
            (
                "Propuesta para el {dia}:\n- Mañana: lo que exige más concentración, antes de las reuniones.\n- Mediodía: recados cortos (compra, llamadas).\n- Tarde: reuniones seguidas para no partir el día.\nDeja un hueco de media hora libre; siempre hace falta.",
                "Yo agruparía las {n} reuniones en dos bloques y pondría el dentista a primera hora, que suele ir con menos retraso. La compra, por la tarde o pedida a domicilio.",
            ),
        ),
        Topic(
            (
                "¿Cuánto tiempo aguanta {comida} en la nevera?",
                "hice {comida} el domingo, ¿sigue bueno?",
            ),
            (
                "Como referencia, {comida} aguanta unos tres o cuatro días en la nevera bien tapado. Si huele raro o ha cambiado de textura, mejor tirarlo. Para la próxima, congela en raciones lo que no vayas a comer en dos días.",
                "Si lo guardaste en un recipiente cerrado y la nevera está a 4 °C o menos, normalmente sí hasta el tercer o cuarto día. Recaliéntalo bien, hasta que humee.",
            ),
        ),
        Topic(
            ("Corrígeme este mensaje: «{texto}»", "¿está bien escrito esto? «{texto}»"),
            (
                "Casi perfecto: revisa las tildes («sé», «también», «podré») y pon una coma antes de «pero». Por lo demás se entiende bien y suena natural.",
                "Está bien; solo cambiaría el orden para que lo importante vaya primero. Si es para el trabajo, añade un saludo corto al principio.",
            ),
        ),
        Topic(
            (
                "¿Qué planta puedo poner en un balcón con {luz}?",
                "quiero plantas para el balcón, tiene {luz}",
            ),
            (
                "Con {luz} te irían bien aromáticas como el romero o el tomillo si hay sol, o helechos y potos si hay sombra. Riega cuando la tierra esté seca al tacto, no por calendario.",
                "Para {luz}, empieza con dos o tres macetas fáciles y una buena tierra con drenaje. Lo que más mata las plantas de balcón es el exceso de riego.",
            ),
        ),
        Topic(
            (
                "¿Me explicas qué es {concepto} como si tuviera 12 años?",
                "no entiendo bien qué es {concepto}",
            ),
            (
                "Imagina que {concepto} es como una regla del juego que todos aceptan para no tener que discutir cada vez. Funciona porque mucha gente la usa a la vez; si quieres, te pongo un ejemplo con números.",
                "En pocas palabras: {concepto} es una forma de ponerse de acuerdo sobre algo que no se puede tocar. Lo importante es para qué sirve, no la definición exacta.",
            ),
        ),
        Topic(
            ("gracias!!", "Mil gracias, me has salvado", "perfecto, gracias"),
            (
                "¡De nada! Aquí estoy para lo que necesites.",
                "¡Un placer! Si surge algo más, escríbeme.",
            ),
        ),
    ),
    "zh": (
        Topic(
            ("去{city}玩 {n} 天，有什么推荐？", "下个月去{city}，{n} 天怎么安排比较好？"),
            (
                "{city} {n} 天可以这样安排：\n1. 第一天逛老城区，傍晚找个高处看日落。\n2. 第二天上午去博物馆，下午去当地市场。\n3. 剩下的时间留给周边一日游，或者回去看最喜欢的地方。\n热门景点建议提前预约。",
                "{n} 天在{city}时间够用：别把行程排太满，每天一到两个重点就好。告诉我你更喜欢美食、自然还是人文，我再细化。",
            ),
        ),
        Topic(
            ("{dish}怎么做？{n} 个人吃", "今晚想做{dish}，教我一下"),
            (
                "{dish}（{n} 人份）：\n- 先把材料都备好、切好。\n- 中火慢慢炒香，再按顺序下料。\n- 出锅前尝一下咸淡。\n需要具体用量的话我再列给你。",
                "做{dish}关键是火候，别急。{n} 个人的量，一口中等大小的锅就够了。",
            ),
        ),
        Topic(
            ("帮我给{person}写条消息，想{reason}", "怎么跟{person}说我想{reason}？"),
            (
                "可以这样写：\n\n“您好，打扰一下，我想{reason}。您看什么时候方便，我们电话沟通一下？谢谢！”\n\n需要更正式一点吗？",
                "参考：\n\n“您好，关于{reason}的事想跟您确认一下，麻烦您有空时回复我，谢谢。”\n\n简短一点更容易得到回复。",
            ),
        ),
        Topic(
            ("每个月{thing}要花 {money} 块，怎么省？", "{thing}开销太大了，有什么办法？"),
            (
                "三个办法：先记一周账，看清楚钱花在哪；每周设一个上限；把一个可有可无的固定支出停掉。一般能省下一两成。",
                "先从自动扣费的项目查起。{thing}这块，提前计划、集中购买效果最明显。",
            ),
        ),
        Topic(
            ("给我一个 {n}0 分钟的训练，目标是{goal}", "想{goal}，每天练什么？"),
            (
                "{n}0 分钟训练：\n- 热身 5 分钟。\n- 4 个动作循环 3 组，每个 40 秒，休息 20 秒。\n- 拉伸 5 分钟。\n如果感到疼痛（不是酸），就停下来。",
                "{goal}贵在坚持：每周三次，循序渐进。需要的话我做个表格给你。",
            ),
        ),
        Topic(
            ("最近 {n} 天都睡不好，有什么建议？", "晚上总是两点以后才睡着，怎么办"),
            (
                "最有效的往往最朴素：每天固定时间起床，睡前半小时不看手机，卧室保持凉爽和黑暗。如果持续几周，建议去看医生。",
                "半夜醒来别看时间，躺了二十分钟还睡不着就起来做点安静的事。下午四点后少喝咖啡和茶。",
            ),
        ),
        Topic(
            ("送礼物给喜欢{hobby}的朋友，预算 {money} 元以内", "我爸喜欢{hobby}，送什么好？"),
            (
                "喜欢{hobby}的人，这个预算可以考虑：一件他自己舍不得买的好用工具、一次体验课，或者一个经典款。要我列三个具体的吗？",
                "{hobby}相关的体验类礼物通常比实物更让人惊喜。想送实物的话，挑质量好的小配件。",
            ),
        ),
        Topic(
            ("手机{phone_problem}，怎么办？", "我的手机{phone_problem}"),
            (
                "按这个顺序试：重启；在设置里看哪个应用耗电最多；更新系统；都不行的话先备份再恢复出厂。很多时候是某一个应用的问题。",
                "先重启看看。然后检查权限和省电模式，问题通常出在那里。",
            ),
        ),
        Topic(
            ("推荐 {n} 本和《{book}》类似的书", "看完《{book}》了，接下来看什么？"),
            (
                "喜欢《{book}》的话，可以找风格相近的：人物命运感强、时代背景鲜明的作品。告诉我你偏好经典还是新书，我给你列 {n} 本。",
                "可以先看同一作者的其他作品，再换一个国家风格相近的作家。你习惯纸质书还是电子书？",
            ),
        ),
        Topic(
            ("下周面试{job}，一般会问什么？", "{job}面试怎么准备"),
            (
                "基本会问：为什么想做这个岗位、讲一个你解决过的难题、团队合作的经历、期望薪资。准备两个具体的故事，再准备一个问面试官的问题。",
                "{job}的话，多用数据说明你的成果。要不要我们模拟一次？我问你答。",
            ),
        ),
        Topic(
            ("孩子不懂{topic}，怎么讲？", "怎么给十岁孩子讲{topic}"),
            (
                "讲{topic}可以先从看得见摸得着的东西开始（吃的、钱、画图），再过渡到数字和规则。每天五分钟比周末突击两小时有效。",
                "让孩子反过来讲给你听，你就知道他卡在哪里了。生活里的例子比做三道题更管用。",
            ),
        ),
        Topic(
            ("帮我安排一下{day}，有 {n} 个会，还要去医院", "{day}事情好多，帮我排一下"),
            (
                "{day}建议这样排：\n- 上午先做最需要专注的事。\n- 中午处理短事项（电话、取快递）。\n- 下午把会集中在一起。\n留出半小时机动时间，总会用上的。",
                "把 {n} 个会尽量排在一起，医院放在早上第一个号，通常等得最少。",
            ),
        ),
        Topic(
            ("{food}放冰箱能放几天？", "周日做的{food}，现在还能吃吗？"),
            (
                "一般来说，{food}密封冷藏可以放三到四天。如果有异味或者口感变了就别吃了。下次吃不完的可以分装冷冻。",
                "如果一直密封冷藏、冰箱温度在 4 度以下，三四天内通常没问题，吃之前彻底加热。",
            ),
        ),
        Topic(
            ("阳台{light}，适合养什么植物？", "想在阳台养花，{light}"),
            (
                "{light}的话，有太阳可以养迷迭香、薄荷这类香草，阴一点就选绿萝、蕨类。土干了再浇水，别按日子浇。",
                "先从两三盆好养的开始，用排水好的土。阳台植物最常见的死因是浇水太多。",
            ),
        ),
        Topic(
            ("用简单的话给我讲讲什么是{concept}", "{concept}到底是什么意思？"),
            (
                "可以把{concept}想成一种大家都认可的规则，这样就不用每次重新商量。要不要我举个带数字的例子？",
                "简单说，{concept}就是大家对一件看不见摸不着的东西达成的共识。重点是它有什么用，而不是定义本身。",
            ),
        ),
        Topic(
            ("谢谢！", "太感谢了", "好的，谢啦"),
            ("不客气！有需要随时找我。", "不用谢，还有什么问题随时说。"),
        ),
    ),
    "en": (
        Topic(
            (
                "What should I see in {city} in {n} days?",
                "Heading to {city} for {n} days, any tips?",
            ),
            (
                "For {n} days in {city}: walk the old town on day one, a museum and a market on day two, and keep the rest loose for a day trip or a second look at your favourite spot. Book anything with queues ahead.",
                "{n} days is plenty for {city} if you don't overpack it — one or two anchors per day. Tell me whether you're more into food, art or outdoors and I'll tighten it.",
            ),
        ),
        Topic(
            ("How do I make {dish} for {n}?", "recipe for {dish}? {n} people"),
            (
                "For {dish} for {n}: prep everything before you start, cook on medium heat, taste at the end. Want exact quantities?",
                "{dish} is forgiving — the main thing is not to rush the first step. One medium pan or dish is enough for {n}.",
            ),
        ),
        Topic(
            (
                "Help me write a message to {person} to {reason}",
                "can you draft a note to {person}? I want to {reason}",
            ),
            (
                "Here's a draft:\n\n\"Hi, I'm writing to {reason}. Could you let me know what you need from me? Thanks in advance.\"\n\nMore formal, or more direct?",
                'Short version:\n\n"Hello — I\'d like to {reason}. When would be a good time to sort this out? Thank you."',
            ),
        ),
        Topic(
            (
                "I spend about {money} a week on takeaway, how do I cut it?",
                "ideas to spend less on groceries?",
            ),
            (
                "Track one week honestly, set a weekly cap, and drop one recurring purchase you won't miss. That usually trims 15-20%.",
                "Plan three dinners ahead and shop once; most of the savings come from not deciding when you're hungry.",
            ),
        ),
        Topic(
            ("thanks!", "perfect, thank you", "great, cheers"),
            ("You're welcome! Ping me anytime.", "Glad it helped!"),
        ),
    ),
}

FOLLOW_UPS: dict[str, tuple[tuple[str, str], ...]] = {
    "es": (
        (
            "¿Y algo más barato?",
            "Claro: la opción más económica es hacerlo tú mismo o buscar una alternativa de segunda mano en buen estado. Dime un tope y te digo qué cabe.",
        ),
        (
            "vale, ¿y si llueve?",
            "Si llueve, cambia el orden: lo cubierto (museos, mercados, cafeterías) para ese día y lo de fuera para el siguiente.",
        ),
        (
            "¿me lo puedes resumir en tres puntos?",
            "Claro:\n1. Lo principal primero.\n2. Lo que se pueda reservar, resérvalo ya.\n3. Deja margen para imprevistos.",
        ),
        (
            "¿y eso cuánto cuesta más o menos?",
            "Depende mucho de la temporada, pero como referencia cuenta con un precio medio y un 20 % de margen por si acaso.",
        ),
        ("ok, lo pruebo y te cuento", "¡Genial! Aquí estaré."),
    ),
    "zh": (
        (
            "有没有便宜一点的？",
            "有的：自己动手或者买二手成色好的都更划算。告诉我你的上限，我帮你看看。",
        ),
        (
            "那下雨怎么办？",
            "下雨就调换顺序：那天安排室内的（博物馆、商场、咖啡馆），户外的挪到第二天。",
        ),
        (
            "能总结成三点吗？",
            "当然：\n1. 先做最重要的。\n2. 能预约的马上预约。\n3. 留一些机动时间。",
        ),
        ("大概要花多少钱？", "看季节，参考一个平均价，再多留两成预算比较稳妥。"),
        ("好，我试试再告诉你", "好的，有结果告诉我！"),
    ),
    "en": (
        (
            "anything cheaper?",
            "Sure — doing it yourself or buying second-hand in good condition is the cheapest. Give me a ceiling and I'll check what fits.",
        ),
        (
            "and if it rains?",
            "Swap the days: indoor things (museums, markets, cafés) for the rainy one, outdoor for the next.",
        ),
        ("ok I'll try and let you know", "Great, talk soon!"),
    ),
}


CLOSERS: dict[str, tuple[str, ...]] = {
    "es": (
        "",
        "",
        "",
        " ¿Quieres que te lo pase en una lista para guardarlo?",
        " Si me das más detalles, lo ajusto.",
        " Avísame si algo no encaja.",
        " Luego me cuentas qué tal.",
    ),
    "zh": (
        "",
        "",
        "",
        "要不要我整理成清单方便你保存？",
        "你再多说点情况，我可以调整。",
        "有不合适的地方告诉我。",
        "回头告诉我效果怎么样。",
    ),
    "en": (
        "",
        "",
        " Want it as a checklist?",
        " Tell me more and I'll adjust.",
        " Let me know how it goes.",
    ),
}


def fill(template: str, lang: str, rng: Random, values: dict[str, str]) -> str:
    return fill_slots(template, SLOTS[lang], rng, values)


def fill_slots(
    template: str, slots: Mapping[str, Sequence[str]], rng: Random, values: dict[str, str]
) -> str:
    """The template with its slots filled (the same slot gets the same value in one exchange)."""
    for key, pool in slots.items():
        if "{" + key + "}" in template and key not in values:
            values[key] = rng.choice(pool)
    return template.format(**{k: values.get(k, "") for k in slots})


def exchanges(lang: str, rng: Random) -> list[tuple[str, str]]:
    """One topic: its first question and answer, then zero to three follow-ups."""
    topic = rng.choice(TOPICS[lang])
    values: dict[str, str] = {}
    ask = fill(rng.choice(topic.asks), lang, rng, values)
    out = [(ask, fill(rng.choice(topic.answers), lang, rng, values) + rng.choice(CLOSERS[lang]))]
    if len(topic.asks[0]) > 12:  # not a thank-you
        n = min(rng.choice((0, 0, 1, 1, 2, 3)), len(FOLLOW_UPS[lang]))
        out.extend(rng.sample(FOLLOW_UPS[lang], n))
    return out


# --- planted in chats ---------------------------------------------------------------------------

CHAT_CONSTRAINTS = {
    "es": (
        "Respóndeme siempre en español",
        "no me mandes listas larguísimas, como mucho cinco puntos",
        "no me recomiendes nada con gluten, soy celíaca",
        "los precios dámelos en pesos mexicanos",
        "nada de vuelos con escala en Miami",
        "prefiero que me hables de tú, no de usted",
        "si es para mi madre, que sea sin azúcar añadido",
        "los planes con niños, que acaben antes de las nueve",
        "no me sugieras Uber, solo transporte público",
        "cuando me des horarios, en formato de 24 horas",
        "evita restaurantes con carne, en casa somos vegetarianos",
        "no me pases enlaces de Amazon",
    ),
    "zh": (
        "以后回复我请用简体中文",
        "推荐餐厅的时候别选辣的，我不能吃辣",
        "行程里每天别超过两个景点",
        "价格都用人民币报给我",
        "别给我推荐需要排队很久的网红店",
        "回答尽量简短，手机上看长文太累",
        "周末的安排别太早，九点以前不出门",
        "涉及孩子的活动要适合六岁左右的",
        "不要推荐自驾，我没有驾照",
        "买东西优先国产品牌",
    ),
    "en": (
        "keep answers under five bullet points",
        "I'm vegetarian, so no meat in any recipe",
        "always give me prices in euros",
        "no early flights, nothing before 9am",
        "don't suggest anything that needs a car",
        "please don't recommend chain restaurants",
        "short answers please, I read these on my phone",
    ),
}

_ES_NAMES = (
    "Lucía Fernández",
    "Marta Quispe",
    "Andrés Castillo",
    "Paula Herrera",
    "Javier Molina",
    "Valentina Rojas",
)
_ZH_NAMES = ("王雨桐", "李思远", "陈嘉怡", "张明轩", "周若曦")
_ES_MONTHS = (
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "septiembre",
    "octubre",
)


def chat_fact(lang: str, rng: Random) -> tuple[str, str]:
    """(message, needle) for a fact stated in a chat."""
    hh, mm = rng.randint(5, 22), rng.choice(("05", "15", "20", "40", "50"))
    day = rng.randint(2, 28)
    options: tuple[tuple[str, str], ...]
    if lang == "es":
        options = (
            (
                f"mi nombre es {rng.choice(_ES_NAMES)}",
                "Por cierto, {f}, por si tienes que poner un nombre en la reserva.",
            ),
            (
                f"mi vuelo sale el {day} de {rng.choice(_ES_MONTHS)} a las {hh}:{mm}",
                "Te cuento: {f}. ¿Me da tiempo a todo?",
            ),
            (
                f"mi hija se llama Abril y tiene {rng.randint(3, 14)} años",
                "Para que lo tengas en cuenta, {f}.",
            ),
            (
                f"el presupuesto total del viaje es de {rng.randint(8, 40) * 100} euros",
                "Ojo, {f}, no más.",
            ),
            (
                f"mi número de socio del gimnasio es el {rng.randint(10000, 99999)}",
                "Apúntalo por si acaso: {f}.",
            ),
            (
                f"vivo en {rng.choice(('Lavapiés', 'Gràcia', 'Ruzafa', 'Triana', 'Coyoacán'))}",
                "Bueno, {f}, así que busca cerca.",
            ),
        )
    elif lang == "zh":
        options = (
            (f"预算是 {rng.randint(2, 9)} 万元", "先说一下，这次装修{f}。"),
            (
                f"我的航班是 {rng.randint(1, 12)} 月 {day} 日 {hh}:{mm} 起飞",
                "对了，{f}，来得及吗？",
            ),
            (f"我女儿叫{rng.choice(_ZH_NAMES)}，今年 {rng.randint(3, 12)} 岁", "补充一下，{f}。"),
            (
                f"我住在{rng.choice(('朝阳区望京', '浦东张江', '天河区珠江新城', '西湖区文三路'))}",
                "我这边的情况：{f}。",
            ),
            (f"会员号是 {rng.randint(10000000, 99999999)}", "记一下，{f}。"),
        )
    else:
        options = (
            (
                f"my flight leaves on {day} {rng.choice(('March', 'April', 'May'))} at {hh}:{mm}",
                "Also, {f}.",
            ),
            (
                f"my partner's birthday is on {day} {rng.choice(('June', 'July', 'August'))}",
                "Note that {f}.",
            ),
        )
    fact, template = options[rng.randrange(len(options))]
    return template.format(f=fact), fact


CHAT_DECISIONS = {
    "es": (
        "Te propongo reservar el hotel en Triana en lugar del centro, porque está a diez minutos a pie del recinto y cuesta menos.",
        "Yo dejaría el museo para el martes por la mañana, porque el lunes cierra y por la tarde hay mucha más gente.",
        "Mejor coger el tren de las 7:40 que el de las 9:10, porque con el segundo pierdes el enlace en Zaragoza.",
        "Te recomiendo pagar la matrícula en dos plazos en vez de uno, porque el segundo plazo no tiene recargo.",
        "Yo iría primero al ayuntamiento y después al banco, porque para abrir la cuenta te pedirán el certificado de empadronamiento.",
        "Prefiero sugerirte la bicicleta estática antes que salir a correr, porque con la rodilla así el impacto es menor.",
        "Mejor reservar la cena para las 20:30 que para las 22:00, porque a esa hora la cocina ya está cerrando.",
        "Yo pediría el presupuesto por escrito antes de aceptar, porque así no te pueden cobrar extras que no estén en la lista.",
        "Te sugiero el seguro a terceros ampliado y no el todo riesgo, porque el coche tiene once años y la franquicia no compensa.",
        "Mejor hacer la mudanza en dos viajes el sábado que alquilar la furgoneta grande, porque la grande no cabe en tu garaje.",
        "Yo empezaría por la ruta corta del domingo en lugar de la de veinte kilómetros, porque llevas tres semanas sin salir.",
        "Te recomiendo comprar los billetes ahora y no esperar a la oferta, porque en Semana Santa suben cada día.",
    ),
    "zh": (
        "我建议把博物馆放在周二上午，因为周一闭馆，下午人又太多。",
        "我建议订早上 7:40 的高铁而不是 9:10 的，因为后一班赶不上南京的换乘。",
        "我建议先去派出所开证明再去银行，因为开户要用到这个证明。",
        "建议选分两期付款，而不是一次付清，因为第二期不收手续费。",
        "我会把晚饭订在六点半，而不是八点，因为那家店八点以后就不接新客了。",
        "我建议住在地铁站附近而不是景区里面，因为景区里的酒店贵一倍，交通也不方便。",
        "我建议先买二手的练手，而不是直接买新款，因为你还不确定会不会坚持下去。",
        "我会选周六上午去办，而不是周五下午，因为周五下午窗口排队的人最多。",
        "建议这次走高速而不是国道，因为国道那段正在修路，要多绕四十分钟。",
        "我建议先把信用卡的欠款还清，再考虑理财，因为信用卡的利息比理财收益高得多。",
    ),
    "en": (
        "I'd book the 7:40 train rather than the 9:10, because the later one misses your connection in Lyon.",
        "I'd do the museum on Tuesday morning instead of Monday, because it's closed on Mondays.",
        "I'd take the refund as store credit only if they add the 10% bonus, because otherwise the cash is worth more to you.",
        "I'd go with the smaller flat near the station rather than the bigger one, because the commute difference is an hour a day.",
        "I'd send the email tonight instead of waiting for Monday, because their office closes the claim window on Friday.",
    ),
}

ACKS = {
    "es": (
        "¡Apuntado!",
        "Entendido, lo tendré en cuenta.",
        "Perfecto, anotado.",
        "Vale, lo tengo.",
    ),
    "zh": ("好的，记下了。", "明白，我会注意的。", "收到！", "好嘞，没问题。"),
    "en": ("Noted!", "Got it, I'll keep that in mind.", "OK, noted."),
}
