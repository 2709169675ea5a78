"""What the server refuses, in both languages: the toasts a page can show (issue 25 part 2).

A raiser names the message and its fields (``InputError(key="refusal-too-large", label=..., size=..., limit=...)``,
:class:`vit.errors.InputError`; the middleware's ``Refused(status, key)``); it is written in English for the API, the
CLI and the log, and in the page's language where a page shows it (``error.words(lang)``).
"""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "refusal-no-image": {"en": "No image yet: upload a photo, take one with the webcam, paste one, draw one (Draw), "
                               "or click an example.",
                         "zh": "还没有图像：上传一张照片、用摄像头拍一张、粘贴一张、画一张（画），或点击一个示例。"},
    "refusal-empty-canvas": {"en": "The canvas is empty: draw a shape on it with the mouse, a finger or a pen.",
                             "zh": "画布是空的：用鼠标、手指或笔在上面画一个形状。"},
    "refusal-not-a-drawing": {"en": "This is not a drawing from the page's canvas: draw on the canvas again.",
                              "zh": "这不是页面画布上的画：请在画布上重新画。"},
    "refusal-upload-again": {"en": "This image could not be used: please upload the image again.",
                             "zh": "这张图像无法使用：请重新上传。"},
    "refusal-dropped": {"en": "This picture's analysis was dropped to make room for other users' analyses: press "
                              "Analyze to run it again.",
                        "zh": "为了给其他用户的分析腾出空间，这张图片的分析已被丢弃：请按“分析”重新运行。"},
    "refusal-busy": {"en": "Your previous analysis is still running: this one was not started. Wait for the "
                           "pictures, then change the setting again.",
                     "zh": "你上一次的分析还在运行：这一次没有开始。请等图片出来后再改设置。"},
    "refusal-replaced": {"en": "Replaced by a newer request from the same tab.", "zh": "已被同一页面的更新请求取代。"},
    "refusal-address-share": {"en": "Many analyses from your address are waiting for the model while other users wait "
                                    "too: this one was not started. Press Analyze again in a moment.",
                              "zh": "来自你的地址的许多分析正在等待模型，其他用户也在等待：这一次没有开始。"
                                    "请稍后再按“分析”。"},
    "refusal-not-image-like": {"en": "could not read {label} as an image (not a JPEG/PNG/WebP/GIF/BMP/TIFF file?); "
                                     "it looks like {what}",
                               "zh": "无法把 {label} 作为图像读取（不是 JPEG/PNG/WebP/GIF/BMP/TIFF 文件？）；"
                                     "它看起来像 {what}"},
    "refusal-not-image": {"en": "could not read {label} as an image (not a JPEG/PNG/WebP/GIF/BMP/TIFF file?)",
                          "zh": "无法把 {label} 作为图像读取（不是 JPEG/PNG/WebP/GIF/BMP/TIFF 文件？）"},
    "refusal-format": {"en": "could not use {label}: {fmt} files are not supported, use a JPEG, PNG, WebP, GIF, BMP "
                             "or TIFF file",
                       "zh": "无法使用 {label}：不支持 {fmt} 文件，请使用 JPEG、PNG、WebP、GIF、BMP 或 TIFF 文件"},
    "refusal-corrupt": {"en": "could not decode {label}: the file is truncated or corrupt ({reason})",
                        "zh": "无法解码 {label}：文件不完整或已损坏（{reason}）"},
    "refusal-empty": {"en": "image is empty (0 bytes): {label}", "zh": "图像是空的（0 字节）：{label}"},
    "refusal-too-large": {"en": "{label} is {size} MB, more than the limit of {limit} MB",
                          "zh": "{label} 有 {size} MB，超过了 {limit} MB 的上限"},
    "refusal-bomb": {"en": "image is {size}, more than the limit of {limit} pixels (refused as a possible "
                           "decompression bomb)",
                     "zh": "图像有 {size}，超过了 {limit} 像素的上限（可能是解压炸弹，已拒绝）"},
    "refusal-pixels": {"en": "image is {w} x {h} = {pixels} pixels, more than the limit of {limit} pixels",
                       "zh": "图像有 {w} x {h} = {pixels} 像素，超过了 {limit} 像素的上限"},
    "refusal-decode-memory": {"en": "decoding {label} ({w} x {h} pixels, {fmt}) would take about {need} GB of memory, "
                                    "more than the limit of {limit} GB for one image: send a smaller image or a JPEG",
                              "zh": "解码 {label}（{w} x {h} 像素，{fmt}）大约要 {need} GB 内存，"
                                    "超过了一张图像 {limit} GB 的上限：请发送更小的图像，或一个 JPEG"},
    "refusal-decoded-pixels": {"en": "{label} ({w} x {h} pixels, {fmt}) is decoded at full size, which takes "
                                     "seconds above {limit} pixels: send it as a JPEG, or at most {most} pixels",
                               "zh": "{label}（{w} x {h} 像素，{fmt}）要按原尺寸解码，超过 {limit} 像素时要花好几秒："
                                     "请把它存为 JPEG 再发送，或不超过 {most} 像素"},
    "refusal-scans": {"en": "{label} is a progressive JPEG with more than {allowed} scans (a normal one has about 10), "
                            "which would take minutes to decode: save it again as a normal JPEG",
                      "zh": "{label} 是一个有超过 {allowed} 次扫描的渐进式 JPEG（普通的约 10 次），解码要花几分钟："
                            "请把它重新存为普通的 JPEG"},
    "refusal-scans-size": {"en": "{label} is a progressive JPEG of {w} x {h} pixels with more than {allowed} scans (a "
                                 "normal one has about 10), which would take minutes to decode: save it again as a "
                                 "normal JPEG",
                           "zh": "{label} 是一个 {w} x {h} 像素、有超过 {allowed} 次扫描的渐进式 JPEG"
                                 "（普通的约 10 次），解码要花几分钟：请把它重新存为普通的 JPEG"},
    "refusal-budget": {"en": "{model} at patch size {P} with {L} layers ({T} tokens) needs about {need} GB for its "
                             "attention maps; this server allows {budget} GB. Choose a larger patch size or fewer "
                             "layers.",
                       "zh": "{model} 在 patch 大小 {P}、{L} 层（{T} 个 token）时，它的 attention map 大约要 "
                             "{need} GB；这台服务器只允许 {budget} GB。请选择更大的 patch 大小或更少的层。"},
    "refusal-request-too-big": {"en": "This request is larger than the app accepts.",
                                "zh": "这个请求超过了应用接受的大小。"},
    "refusal-one-file": {"en": "Send one image per upload.", "zh": "每次上传只发送一张图像。"},
    "refusal-foreign": {"en": "This server answers only requests for its own address.",
                        "zh": "这台服务器只回答发往它自己地址的请求。"},
    "refusal-too-many-jobs": {"en": "Too many requests from your address are waiting: wait for them to finish, then "
                                    "try again.",
                              "zh": "来自你的地址的等待中的请求太多：请等它们完成后再试。"},
    "refusal-bad-hash": {"en": "session_hash must be up to 64 letters, digits, '-' or '_'.",
                         "zh": "session_hash 最多 64 个字母、数字、“-”或“_”。"},
    "refusal-not-found": {"en": "Not Found", "zh": "没有找到"},
    "refusal-upload-full": {"en": "The server's upload space is full: try again in a minute.",
                            "zh": "服务器的上传空间已满：请一分钟后再试。"},
    "refusal-upload-share": {"en": "Your address has used its share of the server's upload space: close pages "
                                   "you no longer use, or try again in a minute.",
                             "zh": "你的地址已用完它在服务器上传空间中的份额：请关闭不再使用的页面，或一分钟后再试。"},
    "refusal-file-gone": {"en": "This file is not available (pictures are kept for a while, then removed): press "
                                "Analyze to draw them again.",
                          "zh": "这个文件无法取得（图片只保留一段时间，之后会被删除）：请按“分析”重新画出它们。"},
    "refusal-not-finite": {"en": "A control sent {value}, which is not a number it can show: move its slider or type "
                                 "a number such as 3.",
                           "zh": "一个控件发来了 {value}，这不是它能显示的数：请拖动它的滑块，或输入一个数，比如 3。"},
    "refusal-export-share": {"en": "Many lesson PDFs from your address are waiting while other users wait too: this "
                                   "one was not made. Press the button again in a moment.",
                             "zh": "来自你的地址的许多课程 PDF 正在等待，其他用户也在等待：这一份没有生成。"
                                   "请稍后再按一次按钮。"},
    "refusal-fetch-share": {"en": "Many pages are waiting for a model's weights to download while other users wait "
                                  "for the model: this analysis stepped aside. Press Analyze again in a moment.",
                            "zh": "许多页面正在等待模型权重下载，其他用户也在等待模型：这次分析先让开了。"
                                  "请稍后再按“分析”。"},
}
